import type { NewRecipient } from "../db/queries/campaigns";
import type { CampaignTemplate } from "../db/schema";
import { INVALID_USER_ID, userIdKind } from "../lib/contact-identity";
import { toE164 } from "../lib/phone";
import { fillTemplate, scanTemplate } from "../lib/template";
import type { MessageType } from "../messages/types";
import { placeholderNames, type TemplateValue, templateValues } from "./template";

/** Most recipients one request may add (docs/campaigns.md, Campaigns): 10,000 keeps a body under 1 MiB. */
export const MAX_RECIPIENTS_PER_REQUEST = 10_000;

/** Longest message text after filling a campaign's template: 4,096 for text, 1,024 for a caption (as sends). */
export const contentLimit = (type: MessageType): number => (type === "text" ? 4096 : 1024);

/** A variable's name, as a placeholder names it: a letter or `_`, then letters, digits or `_`, at most 64. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * A recipient as a request gives it: a phone number or a user id (a BSUID or a LID; docs/contacts.md,
 * Contacts), exactly one of the two, and the values of the campaign template's placeholders.
 */
export interface RecipientInput {
  to_number?: string | undefined;
  to_user_id?: string | undefined;
  variables?: Record<string, string> | undefined;
}

/** A problem with one field of a request: its path (`recipients.3.variables`) and message. */
export interface FieldProblem {
  path: (string | number)[];
  message: string;
}

/** What a campaign sends, as far as its recipients' `variables` are concerned. */
export interface CampaignMessage {
  type: MessageType;
  /** The text or caption template (null for media without a caption, and for a template campaign). */
  content: string | null;
  /** A template campaign's template, its variables' values holding placeholders; else null. */
  template: CampaignTemplate | null;
}

/** The texts a recipient's `variables` fill: the content, or each value of the template's variables. */
function fillable(message: CampaignMessage): TemplateValue[] {
  if (message.template) return templateValues(message.template);
  return message.content === null
    ? []
    : [{ path: ["content"], text: message.content, max: contentLimit(message.type) }];
}

/**
 * Checks recipients against what a campaign sends ({@link CampaignMessage}): each names exactly
 * one of `to_number` and `to_user_id`; a number must be valid (normalised to E.164, as sends are)
 * and a user id a BSUID or a LID (lib/contact-identity.ts `userIdKind`), stored as given, as a
 * send stores it (docs/contacts.md, Contacts); each placeholder of the content (or of a
 * template campaign's variables) needs a value in the recipient's `variables`, each filled text
 * within its limit ({@link contentLimit} for content; 1–1,024 characters for a body value and
 * 1–2,000 for a button parameter, as a template send takes them). Problems name the recipient's
 * index in `recipients`.
 *
 * @returns the recipients to store (numbers normalised; `toNumber` holds the address, a number or
 *   a user id), and the problems (none when all pass).
 */
export function checkRecipients(
  message: CampaignMessage,
  recipients: RecipientInput[],
): { rows: NewRecipient[]; problems: FieldProblem[] } {
  const texts = fillable(message);
  const names = [...new Set(texts.flatMap((t) => placeholderNames(t.text)))];
  const rows: NewRecipient[] = [];
  const problems: FieldProblem[] = [];
  recipients.forEach((recipient, index) => {
    const toNumber = addressOf(recipient, index, problems);
    const variables = recipient.variables ?? {};
    const missing = names.filter((name) => !Object.hasOwn(variables, name));
    const path = ["recipients", index, "variables"];
    if (missing.length > 0)
      problems.push({ path, message: `no value for ${missing.map((name) => `{{${name}}}`).join(", ")}` });
    else
      for (const text of texts) {
        const length = [...fillTemplate(text.text, variables)].length;
        const field = text.path.join(".");
        if (length > text.max)
          problems.push({
            path,
            message:
              text.path[0] === "content"
                ? `the filled-in text is over ${text.max} characters`
                : `the filled-in ${field} is over ${text.max} characters`,
          });
        else if (length === 0 && message.template)
          problems.push({ path, message: `the filled-in ${field} is empty` });
      }
    if (toNumber) rows.push({ toNumber, variables: recipient.variables ?? null });
  });
  return { rows, problems };
}

/**
 * The address recipient `index` names (an E.164 number or a user id), or null after adding its
 * problem to `problems`: neither or both of `to_number` and `to_user_id`, an invalid number, or a
 * user id of no known kind.
 */
function addressOf(recipient: RecipientInput, index: number, problems: FieldProblem[]): string | null {
  const problem = (field: "to_number" | "to_user_id", message: string) => {
    problems.push({ path: ["recipients", index, field], message });
    return null;
  };
  const { to_number: number, to_user_id: userId } = recipient;
  if (number !== undefined && userId !== undefined)
    return problem("to_user_id", "give to_number or to_user_id, not both");
  if (userId !== undefined) {
    if (userIdKind(userId) === null) return problem("to_user_id", INVALID_USER_ID);
    return userId;
  }
  if (number === undefined) return problem("to_number", "required (or to_user_id)");
  return toE164(number) ?? problem("to_number", "invalid phone number");
}

/**
 * Problems with a campaign's template text itself (its `content`, or one value of a template
 * campaign's variables): a placeholder whose name is not a {@link VARIABLE_NAME}, and braces that
 * open or close no placeholder. Any well-formed name is allowed; each recipient's variables must
 * then supply it.
 */
export function campaignTemplateProblems(content: string | null): string[] {
  if (content === null) return [];
  const { placeholders, strayBraces } = scanTemplate(content);
  return [
    ...placeholders
      .filter(({ name }) => !VARIABLE_NAME.test(name))
      .map(({ written }) => `placeholder ${written} is not a variable name (letters, digits and _)`),
    ...strayBraces,
  ];
}
