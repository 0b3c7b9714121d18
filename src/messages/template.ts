import type { FieldErrors } from "../errors";

/*
 * Template messages (docs/gateways.md, Message templates): what a send names and fills in, how it is checked
 * against the cached template (src/db/schema/templates.ts), and how it travels to the gateway.
 * Placeholders are Meta's positional `{{1}}`, `{{2}}`… in a `BODY` component's `text` and in a
 * `URL` button's `url` (Meta, "Message templates → Components").
 */

/** Kinds of button parameter a send may fill (the document's `ButtonComponent.sub_type`, less `catalog`). */
export const BUTTON_SUB_TYPES = ["url", "quick_reply"] as const;

/** One button's parameter: the button's position (0-based) and its value (a URL suffix or a payload). */
export interface TemplateButtonVariable {
  index: number;
  sub_type: (typeof BUTTON_SUB_TYPES)[number];
  parameter: string;
}

/** A template send: the template's name and language, and its variables (body ones in order). */
export interface TemplateSend {
  name: string;
  language: string;
  variables: { body: string[]; buttons: TemplateButtonVariable[] };
}

/** What a template's components ask for: body placeholders, and per button its type and placeholders. */
export interface TemplateNeeds {
  body: number;
  buttons: { index: number; type: string; placeholders: number }[];
}

const placeholdersIn = (text: unknown): number => {
  if (typeof text !== "string") return 0;
  let highest = 0;
  for (const match of text.matchAll(/\{\{\s*(\d+)\s*\}\}/g)) highest = Math.max(highest, Number(match[1]));
  return highest;
};

/** The variables template `components` (Meta's JSON array, as cached) asks for. */
export function templateNeeds(components: string): TemplateNeeds {
  const list = JSON.parse(components) as Record<string, unknown>[];
  const needs: TemplateNeeds = { body: 0, buttons: [] };
  for (const component of list) {
    const type = String(component.type ?? "").toUpperCase();
    if (type === "BODY") needs.body = placeholdersIn(component.text);
    if (type === "BUTTONS" && Array.isArray(component.buttons)) {
      component.buttons.forEach((button: Record<string, unknown>, index) => {
        needs.buttons.push({
          index,
          type: String(button.type ?? "").toUpperCase(),
          placeholders: placeholdersIn(button.url),
        });
      });
    }
  }
  return needs;
}

/**
 * Whether a template can only be sent to a phone number: an authentication template with an `OTP`
 * button (copy code, one tap, zero tap), which Meta refuses to send to a business-scoped user id
 * (error 131062; Meta's "Business-scoped user IDs").
 */
export function needsPhoneNumber(template: { category: string; components: string }): boolean {
  return (
    template.category.toUpperCase() === "AUTHENTICATION" &&
    templateNeeds(template.components).buttons.some((button) => button.type === "OTP")
  );
}

/**
 * Checks a send's variables against the template's needs: each body placeholder `{{n}}` needs
 * `variables.body[n-1]` (none more); a `URL` button with a placeholder needs a `url` parameter at
 * its index; a `QUICK_REPLY` button may take a `quick_reply` payload; an authentication
 * template's `OTP` button (copy code, one tap) may take the code as a `url` parameter, the form
 * Meta's "Authentication templates" send reference gives it; any other button parameter is refused. @returns the problem's `errors` keyed `template.variables.body.<i>` /
 * `template.variables.buttons.<i>`, or null when they fit.
 */
export function templateVariableErrors(
  needs: TemplateNeeds,
  variables: TemplateSend["variables"],
): FieldErrors | null {
  const errors: FieldErrors = {};
  for (let i = variables.body.length; i < needs.body; i++) {
    errors[`template.variables.body.${i}`] = [`required: the template's body has {{${i + 1}}}`];
  }
  if (variables.body.length > needs.body) {
    errors["template.variables.body"] = [
      `the template's body takes ${needs.body} variable(s), not ${variables.body.length}`,
    ];
  }
  variables.buttons.forEach((given, position) => {
    const button = needs.buttons.find((b) => b.index === given.index);
    const fits =
      (button?.type === "URL" && button.placeholders > 0 && given.sub_type === "url") ||
      (button?.type === "OTP" && given.sub_type === "url") ||
      (button?.type === "QUICK_REPLY" && given.sub_type === "quick_reply");
    if (!fits) {
      errors[`template.variables.buttons.${position}`] = [
        button
          ? `button ${given.index} is ${button.type}, which takes no ${given.sub_type} parameter`
          : `the template has no button ${given.index}`,
      ];
    }
  });
  for (const button of needs.buttons) {
    if (
      button.type === "URL" &&
      button.placeholders > 0 &&
      !variables.buttons.some((b) => b.index === button.index)
    ) {
      errors["template.variables.buttons"] = [
        ...(errors["template.variables.buttons"] ?? []),
        `required: a url parameter for button ${button.index}`,
      ];
    }
  }
  return Object.keys(errors).length > 0 ? errors : null;
}
