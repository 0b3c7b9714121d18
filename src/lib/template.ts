/**
 * The message template engine of OTP apps and campaigns. The placeholder syntax is this API's
 * rule, as `message_template` of `POST /v1/apps` in openapi.json states it.
 *
 * Two placeholder syntaxes are accepted: `{{code}}` and `{code}`, likewise `{{app_name}}` and
 * `{app_name}`, with optional spaces inside the braces (`{{ code }}`, `{ code }`). Braces are
 * reserved for placeholders: any other brace-delimited name, and any brace that closes or opens
 * nothing, is a problem reported by {@link templateProblems}, so that a template is refused when
 * an app is written (422) rather than sending a surprise at OTP time.
 */

/** The names a template may use, and what each stands for. */
export const PLACEHOLDERS = ["code", "app_name"] as const;

export type PlaceholderName = (typeof PLACEHOLDERS)[number];

/** The values substituted when a template is rendered. */
export type TemplateValues = Record<PlaceholderName, string>;

/** Longest template accepted (characters, UTF-16 code units): this API's bound, 1–1,000. */
export const MAX_TEMPLATE_LENGTH = 1_000;

// `{{ name }}` or `{ name }`; the name is everything between the braces (no braces inside),
// trimmed. The double form is tried first so that `{{code}}` is one placeholder, not `{` + `{code}` + `}`.
const PLACEHOLDER = /\{\{([^{}]*)\}\}|\{([^{}]*)\}/g;

function isPlaceholderName(name: string): name is PlaceholderName {
  return (PLACEHOLDERS as readonly string[]).includes(name);
}

/** What a template holds: its placeholders (in order, repeats kept) and its stray braces. */
export interface TemplateScan {
  /** Each placeholder's trimmed name and its text as written (`{{ name }}`). */
  placeholders: { name: string; written: string }[];
  /** One message per `{` or `}` that opens or closes no placeholder, naming its position. */
  strayBraces: string[];
}

/**
 * Reads a template's placeholders (`{{ name }}` or `{ name }`, the name trimmed) and finds the
 * braces that belong to none. Whether a name is allowed is the caller's rule: OTP templates allow
 * {@link PLACEHOLDERS}, campaign templates the recipients' variable names.
 */
export function scanTemplate(template: string): TemplateScan {
  const placeholders: TemplateScan["placeholders"] = [];
  const rest = template.replace(
    PLACEHOLDER,
    (match, double: string | undefined, single: string | undefined) => {
      placeholders.push({ name: (double ?? single ?? "").trim(), written: match });
      // Keep the string's length so that stray-brace positions below refer to the original.
      return " ".repeat(match.length);
    },
  );
  const strayBraces: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const ch = rest[i];
    if (ch === "{" || ch === "}")
      strayBraces.push(`unmatched "${ch}" at position ${i}: braces are reserved for placeholders`);
  }
  return { placeholders, strayBraces };
}

/**
 * Substitutes `values` into a template in one pass, so braces inside a value never form new
 * placeholders: every placeholder whose name `values` has becomes that value; any other is left as
 * written.
 */
export function fillTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(PLACEHOLDER, (match, double: string | undefined, single: string | undefined) => {
    const name = (double ?? single ?? "").trim();
    return Object.hasOwn(values, name) ? (values[name] ?? match) : match;
  });
}

/**
 * Every problem with an OTP template, as human-readable messages; an empty array means the
 * template is valid. Problems: a placeholder with an unknown name (`{{ otp }}`), a stray `{` or `}`
 * (e.g. the malformed `{{code}`), and a template without a code placeholder. This API's rules: a
 * template must contain the code placeholder, and an unknown placeholder is a 422 when an app is
 * created or updated. Length bounds are checked by the request schema, not here.
 */
export function templateProblems(template: string): string[] {
  const { placeholders, strayBraces } = scanTemplate(template);
  const problems = placeholders
    .filter(({ name }) => !isPlaceholderName(name))
    .map(({ written }) => `unknown placeholder ${written}: use {{code}} or {{app_name}}`);
  problems.push(...strayBraces);
  if (!placeholders.some(({ name }) => name === "code"))
    problems.push("must contain the code placeholder {{code}}");
  return problems;
}

/**
 * Substitutes an OTP's `values` into its template: `{{code}}`/`{code}` and
 * `{{app_name}}`/`{app_name}` (spaces inside the braces allowed), by {@link fillTemplate}.
 */
export function renderTemplate(template: string, values: TemplateValues): string {
  return fillTemplate(template, values);
}

/**
 * The template an app gets when it is created without `message_template` (docs/otp.md,
 * Apps; `POST /v1/apps` in openapi.json: "a template with its name written in"): the
 * name is written into the text literally, next to the `{{code}}` placeholder, e.g.
 * `{{code}} is your Acme verification code. Do not share it.` Braces are removed from the name
 * so that it cannot form placeholders; the result always passes {@link templateProblems}. The
 * text names no expiry, since that is an app setting that can change afterwards.
 */
export function defaultTemplate(appName: string): string {
  const name = appName.replace(/[{}]/g, "").replace(/\s+/g, " ").trim();
  return name
    ? `{{code}} is your ${name} verification code. Do not share it.`
    : "{{code}} is your verification code. Do not share it.";
}
