/**
 * The client message id of our message `id` (a uuid): the same on every attempt, so a gateway that
 * takes a client-chosen id (Evolution API's `options.messageId`) sees one message however often it
 * is asked, and a lookup can find it by that id. The shape is the one WhatsApp Web clients give
 * their own message ids and Evolution API's `POST /baileys/generateMessageID/{instance}` returns
 * (Baileys' `generateMessageIDV2`: `3EB0` and 18 upper-case hex digits), here the uuid's first 18
 * hex digits, so it is derived without a call.
 */
export function clientMessageIdOf(id: string): string {
  return `3EB0${id.replaceAll("-", "").slice(0, 18).toUpperCase()}`;
}

/**
 * Whether a gateway's message id (as its answers and receipts give it) is that of the message
 * with client id `clientMessageId`: Evolution API keeps the client id as the message's id
 * (`key.id`), WAHA's NOWEB and GOWS give it as the last part of `{fromMe}_{chatId}_{id}`
 * (src/gateways/waha/send.ts).
 */
export function carriesClientId(providerMessageId: string, clientMessageId: string): boolean {
  return providerMessageId === clientMessageId || providerMessageId.endsWith(`_${clientMessageId}`);
}
