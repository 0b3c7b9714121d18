import { lacksPhoneNumber, recordContact } from "../contacts/learn";
import type { ContactIdentity } from "../lib/contact-identity";
import { userIdKind } from "../lib/contact-identity";
import { log } from "../lib/log";
import type { SessionCore } from "./session-core";

/**
 * What a session object learns of its contacts outside the batch of a stored message (docs/contacts.md,
 * Contacts): a gateway's `contact` event, and, after a message from a user named by a user id
 * alone, the number the gateway can tell for that id.
 */
export class SessionContacts {
  constructor(private readonly core: SessionCore) {}

  /**
   * Links `identity`'s identifiers to the session's contact (src/contacts/learn.ts
   * `recordContact`), as of `at` (epoch ms); `ref` names what told it, so a redelivery records
   * nothing twice.
   */
  async record(identity: ContactIdentity, ref: string, at: number): Promise<void> {
    const current = this.core.current();
    await recordContact(
      this.core.env,
      { accountId: current.account_id, sessionId: current.id, identity, at },
      ref,
    );
  }

  /**
   * Best effort, for a message just stored from `from` named by a user id without a number (a
   * WAHA LID): when the contact lacks a number and the gateway can tell who the id is
   * (`ChatGateway.resolveUserId`), the number it answers is linked to the contact ({@link record},
   * ref `<kind>:<user id>`, e.g. `lid:<lid>`), so the contact gains it with a `contact.updated`.
   * Dated now, when it was learnt: after the message's own `contact.created`. The call is made
   * in the chain of changes, within the gateway's timeout; a failure is logged
   * (`user_id_resolve_failed`) and the message stays as stored (the contact's next message asks
   * again).
   */
  async learnNumber(from: ContactIdentity): Promise<void> {
    const gateway = this.core.gateway();
    const { userId } = from;
    if (!userId || from.phoneNumber || !gateway.resolveUserId) return;
    const current = this.core.current();
    try {
      if (!(await lacksPhoneNumber(this.core.env, current.account_id, current.id, userId))) return;
      const identity = await gateway.resolveUserId(current.session_id, userId);
      if (!identity?.phoneNumber) return;
      await this.record(identity, `${userIdKind(userId) ?? "user_id"}:${userId}`, Date.now());
    } catch (error) {
      log.warn("user_id_resolve_failed", { session: current.id, gateway: gateway.name, error });
    }
  }
}
