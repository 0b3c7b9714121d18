import type { TemplateSend } from "../../messages/template";

/**
 * Meta's `template` object of a template message (the document's `TemplateMessage.template`, schema
 * `TemplateObject`) from a message's content, the JSON of a messages/template.ts `TemplateSend`:
 * `name`; `language: { code, policy: "deterministic" }` (`LanguageObject` requires `policy`,
 * which Meta's own examples omit: the document's rule is followed); and `components`, left out
 * when there is nothing to fill: a `body` component whose `parameters` are the body variables in
 * order as `{ type: "text", text }` (`TextParameter`), then one `button` component per button
 * variable with its `sub_type`, its `index` as a string (`ButtonComponent`) and one parameter:
 * `{ type: "text", text }` for a `url` button's suffix, `{ type: "payload", payload }` for a quick
 * reply (`ButtonParameterObject`).
 */
export function templateObject(content: string | null): Record<string, unknown> {
  const template = JSON.parse(content ?? "{}") as TemplateSend;
  const body = template.variables?.body ?? [];
  const buttons = template.variables?.buttons ?? [];
  const components: Record<string, unknown>[] = [];
  if (body.length > 0)
    components.push({ type: "body", parameters: body.map((text) => ({ type: "text", text })) });
  for (const button of buttons) {
    components.push({
      type: "button",
      sub_type: button.sub_type,
      index: String(button.index),
      parameters: [
        button.sub_type === "url"
          ? { type: "text", text: button.parameter }
          : { type: "payload", payload: button.parameter },
      ],
    });
  }
  return {
    name: template.name,
    language: { code: template.language, policy: "deterministic" },
    ...(components.length > 0 ? { components } : {}),
  };
}
