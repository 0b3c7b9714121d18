// The body of `POST /v1/chatapp/campaigns` from what the console's create form holds: only the
// fields the person filled in, shaped as the API takes them (docs/campaigns.md, Campaigns;
// src/routes/campaigns/campaigns.schemas.ts `CreateCampaignBody`). Pure, so a test can import it
// in the page. The API checks everything again and names each problem by its field path.

import { fillTemplate } from "./campaign-csv.js";

/** The types a campaign sends with a `media_url`. */
export const MEDIA_TYPES = ["image", "video", "audio", "document"];

/** A type's caption rule (messages.schemas.ts `checkContent`): text needs content, audio takes none. */
export function takesContent(type) {
  return type !== "audio" && type !== "template";
}

/** The non-blank lines of `text`, each trimmed. */
function lines(text) {
  return String(text ?? "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/**
 * A template's button parameters from lines of `index,sub_type,parameter` (e.g. `0,url,{{code}}`);
 * the parameter may hold commas. A line without its three parts is sent as far as it goes, for the
 * API to name what is missing (`template.variables.buttons.<i>.<field>`).
 * @returns {{index: number, sub_type: string, parameter?: string}[]}
 */
export function parseButtons(text) {
  return lines(text).map((line) => {
    const [index, subType, ...rest] = line.split(",");
    const button = { index: Number(index?.trim()), sub_type: (subType ?? "").trim() };
    return rest.length > 0 ? { ...button, parameter: rest.join(",").trim() } : button;
  });
}

/**
 * The template's values as they are filled per recipient: body values one a line, buttons as
 * {@link parseButtons} reads them.
 * @returns {{body: string[], buttons: {index: number, sub_type: string, parameter?: string}[]}}
 */
export function templateVariables(bodyText, buttonsText) {
  return { body: lines(bodyText), buttons: parseButtons(buttonsText) };
}

/**
 * The text whose `{{name}}` placeholders each recipient must fill, for the CSV check: the content
 * (text, caption), or a template's body values and button parameters, one a line.
 */
export function placeholderText(values) {
  if (values.type === "template") {
    const variables = templateVariables(values.templateBody, values.templateButtons);
    return [...variables.body, ...variables.buttons.map((b) => b.parameter ?? "")].join("\n");
  }
  return takesContent(values.type) ? (values.content ?? "") : "";
}

/**
 * A template as it is sent, in words: "order_update (en_US): {{1}} = Ada; button 0 (url) = A-17",
 * each body value as `{{n}} = value` and each button parameter as `button i (sub_type) = value`
 * (a button without one shows nothing after `=`).
 * @param {{name: string, language: string, variables: {body: string[], buttons?: {index: number, sub_type: string, parameter?: string}[]}}} template
 */
export function templateText(template) {
  const values = [
    ...template.variables.body.map((value, i) => `{{${i + 1}}} = ${value}`),
    ...(template.variables.buttons ?? []).map(
      (b) => `button ${b.index} (${b.sub_type}) = ${b.parameter ?? ""}`,
    ),
  ];
  return `${template.name} (${template.language})${values.length ? `: ${values.join("; ")}` : ""}`;
}

/**
 * What one recipient is sent, in words, for the form's preview: the text filled in; a media
 * type's `[type]` then its caption filled in; a template as {@link templateText} words it, its
 * values filled in.
 * @param {Record<string, string>} variables the recipient's values
 */
export function previewText(values, variables) {
  if (values.type === "template") {
    const { body, buttons } = templateVariables(values.templateBody, values.templateButtons);
    return templateText({
      name: values.templateName || "(no name)",
      language: values.templateLanguage || "no language",
      variables: {
        body: body.map((text) => fillTemplate(text, variables)),
        buttons: buttons.map((b) => ({ ...b, parameter: fillTemplate(b.parameter ?? "", variables) })),
      },
    });
  }
  const text = takesContent(values.type) ? fillTemplate(values.content ?? "", variables) : "";
  if (values.type === "text") return text;
  return text ? `[${values.type}] ${text}` : `[${values.type}]`;
}

/**
 * A `datetime-local` value ("2026-11-26T10:00", the browser's zone) as ISO 8601 with the browser's
 * offset at that moment ("2026-11-26T10:00:00+01:00"), or the value as typed when it is not one.
 */
export function localIso(local) {
  const date = new Date(local);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(local) || Number.isNaN(date.getTime())) return local;
  const pad = (n) => String(n).padStart(2, "0");
  const offset = -date.getTimezoneOffset();
  const sign = offset < 0 ? "-" : "+";
  const zone = `${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${zone}`
  );
}

/** A number input's value as a number, or undefined when it is empty. */
const number = (value) => (String(value ?? "").trim() === "" ? undefined : Number(value));

/**
 * The create body from the form's values. Left out when not filled: `content` of a media type
 * (a caption is optional; audio and template take none), `delay_between` / `delay_range` (the
 * API's default, 500 ms), `scheduled_at`, `send_window` (sent when its start or end is filled, so
 * a half-filled window is named by the API), and the two options when unticked.
 * @param {{
 *   name: string, sessionIds: string[], type: string, content?: string, mediaUrl?: string,
 *   templateName?: string, templateLanguage?: string, templateBody?: string, templateButtons?: string,
 *   pacing: "fixed" | "range", delayBetween?: string, delayMin?: string, delayMax?: string,
 *   scheduledAt?: string, windowStart?: string, windowEnd?: string, timeZone?: string,
 *   checkNumbers?: boolean, simulateTyping?: boolean,
 * }} values as the form holds them (number inputs as strings)
 * @param {{to_number: string, variables: Record<string, string>}[]} rows the CSV's recipients
 */
export function campaignBody(values, rows) {
  const body = { name: values.name.trim(), chatapp_session_ids: values.sessionIds, type: values.type };
  if (values.type === "text") body.content = values.content ?? "";
  else if (takesContent(values.type) && values.content) body.content = values.content;
  if (MEDIA_TYPES.includes(values.type)) body.media_url = (values.mediaUrl ?? "").trim();
  if (values.type === "template") {
    const variables = templateVariables(values.templateBody, values.templateButtons);
    body.template = {
      name: (values.templateName ?? "").trim(),
      language: (values.templateLanguage ?? "").trim(),
      variables: variables.buttons.length > 0 ? variables : { body: variables.body },
    };
  }
  if (values.pacing === "range") {
    const range = { min_ms: number(values.delayMin), max_ms: number(values.delayMax) };
    if (range.min_ms !== undefined || range.max_ms !== undefined) body.delay_range = range;
  } else {
    const delay = number(values.delayBetween);
    if (delay !== undefined) body.delay_between = delay;
  }
  if (values.scheduledAt) body.scheduled_at = localIso(values.scheduledAt);
  if (values.windowStart || values.windowEnd)
    body.send_window = {
      start: values.windowStart ?? "",
      end: values.windowEnd ?? "",
      time_zone: (values.timeZone ?? "").trim(),
    };
  if (values.checkNumbers) body.check_numbers = true;
  if (values.simulateTyping) body.simulate_typing = true;
  body.recipients = rows.map((row) => ({
    to_number: row.to_number,
    ...(Object.keys(row.variables).length ? { variables: row.variables } : {}),
  }));
  return body;
}
