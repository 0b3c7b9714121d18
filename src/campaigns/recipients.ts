import type { NewRecipient } from "../db/queries/campaigns";
import { toE164 } from "../lib/phone";
import { fillTemplate, scanTemplate } from "../lib/template";
import type { MessageType } from "../messages/types";

/** Most recipients one request may add (README, Campaigns): 10,000 keeps a body under 1 MiB. */
export const MAX_RECIPIENTS_PER_REQUEST = 10_000;

/** Longest message text after filling a campaign's template: 4,096 for text, 1,024 for a caption (as sends). */
export const contentLimit = (type: MessageType): number => (type === "text" ? 4096 : 1024);

/** A variable's name, as a placeholder names it: a letter or `_`, then letters, digits or `_`, at most 64. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** A recipient as a request gives it. */
export interface RecipientInput {
  to_number: string;
  variables?: Record<string, string> | undefined;
}

/** A problem with one field of a request: its path (`recipients.3.variables`) and message. */
export interface FieldProblem {
  path: (string | number)[];
  message: string;
}

/**
 * Checks recipients against a campaign's template `content` (null for media without a caption):
 * each number must be valid (normalised to E.164, as sends are), and each placeholder of the
 * template needs a value in the recipient's `variables`, with the filled text within
 * {@link contentLimit}. Problems name the recipient's index in `recipients`.
 *
 * @returns the recipients to store (numbers normalised), and the problems (none when all pass).
 */
export function checkRecipients(
  content: string | null,
  type: MessageType,
  recipients: RecipientInput[],
): { rows: NewRecipient[]; problems: FieldProblem[] } {
  const names = content === null ? [] : [...new Set(scanTemplate(content).placeholders.map((p) => p.name))];
  const rows: NewRecipient[] = [];
  const problems: FieldProblem[] = [];
  recipients.forEach((recipient, index) => {
    const toNumber = toE164(recipient.to_number);
    if (!toNumber)
      problems.push({ path: ["recipients", index, "to_number"], message: "invalid phone number" });
    const variables = recipient.variables ?? {};
    const missing = names.filter((name) => !Object.hasOwn(variables, name));
    if (missing.length > 0)
      problems.push({
        path: ["recipients", index, "variables"],
        message: `no value for ${missing.map((name) => `{{${name}}}`).join(", ")}`,
      });
    else if (content !== null && [...fillTemplate(content, variables)].length > contentLimit(type))
      problems.push({
        path: ["recipients", index, "variables"],
        message: `the filled-in text is over ${contentLimit(type)} characters`,
      });
    if (toNumber) rows.push({ toNumber, variables: recipient.variables ?? null });
  });
  return { rows, problems };
}

/**
 * Problems with a campaign template itself: a placeholder whose name is not a {@link VARIABLE_NAME},
 * and braces that open or close no placeholder. Any well-formed name is allowed; each recipient's
 * variables must then supply it.
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
