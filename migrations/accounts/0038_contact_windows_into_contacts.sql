-- Each contact's last message time (contacts.last_message_at, filled from the messages in 0037) is the
-- customer service window now, found by any identifier of the contact.
DROP TABLE `contact_windows`;