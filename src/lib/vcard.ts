import ICAL from "ical.js";
import type { ContactCard } from "./contact-cards";

/*
 * Contact cards as vCards, the form linked devices send and receive them in (WhatsApp's
 * `contactMessage.vcard`: vCard 3.0, RFC 2426), written and read by ical.js (its jCard form,
 * RFC 7095). WhatsApp marks a number's WhatsApp id with the `waid` parameter of `TEL` (WAHA's
 * `VCardContact` example: `TEL;type=CELL;type=VOICE;waid=911111111111:+91 11111 11111`), and
 * phones name their kind either by `TYPE` or by an `X-ABLabel` in the same group (`item1.TEL`,
 * `item1.X-ABLabel:Mobile`).
 */

/** A jCard property: name, parameters, value type, values (RFC 7095 §3.3). */
type JcardProperty = [string, Record<string, string | string[]>, string, ...unknown[]];

/**
 * `card` as a vCard 3.0 text: `FN` the formatted name, `N` the name's parts (family; given;
 * additional; prefix; suffix), a `TEL` per phone (`TYPE` its type, `WAID` its WhatsApp id),
 * `EMAIL` and `URL` with their `TYPE`, `ORG` (company; department) and `TITLE`. Parameter names
 * come out upper-case, as ical.js writes them; they are case-insensitive (RFC 2425 §5.8.2).
 * Lines end with CRLF (RFC 2425 §5.8.1), the last one too, but for `END:VCARD`.
 */
export function vcardOf(card: ContactCard): string {
  const { name, org } = card;
  const properties: JcardProperty[] = [
    ["version", {}, "text", "3.0"],
    ["fn", {}, "text", name.formatted_name],
  ];
  const parts = [name.last_name, name.first_name, name.middle_name, name.prefix, name.suffix];
  if (parts.some(Boolean)) properties.push(["n", {}, "text", parts.map((part) => part ?? "")]);
  for (const { phone, type, wa_id } of card.phones)
    properties.push([
      "tel",
      { ...typeParameter(type), ...(wa_id ? { waid: wa_id } : {}) },
      "phone-number",
      phone,
    ]);
  for (const { email, type } of card.emails ?? [])
    properties.push(["email", typeParameter(type), "text", email]);
  for (const { url, type } of card.urls ?? []) properties.push(["url", typeParameter(type), "uri", url]);
  if (org?.company || org?.department)
    properties.push(["org", {}, "text", [org.company ?? "", ...(org.department ? [org.department] : [])]]);
  if (org?.title) properties.push(["title", {}, "text", org.title]);
  // ical.js ends every line with CRLF; the card itself ends at END:VCARD, as WAHA's example.
  return ICAL.stringify(["vcard", properties, []]).trimEnd();
}

/** `{ type }` for a `TYPE` parameter, or none. */
function typeParameter(type: string | undefined): Record<string, string> {
  return type ? { type } : {};
}

/**
 * The first card of vCard text `vcard` as a {@link ContactCard}, or null when it is no vCard (or
 * names nobody). `formatted_name` is `FN`, else the `N` parts joined, else `displayName` (what
 * WhatsApp shows for the card, `contactMessage.displayName`); each `TEL` is a phone with its
 * `waid` as `wa_id` and its kind from `TYPE` (the first other than `VOICE`) or its group's
 * `X-ABLabel`; `EMAIL`, `URL`, `ORG` and `TITLE` as {@link vcardOf} writes them.
 */
export function cardOfVcard(vcard: string, displayName?: string | null): ContactCard | null {
  let parsed: unknown;
  try {
    parsed = ICAL.parse(vcard.trim());
  } catch {
    return null;
  }
  // One card parses to its jCard; several to a list of them.
  const first: unknown = Array.isArray(parsed) && Array.isArray(parsed[0]) ? parsed[0] : parsed;
  if (!Array.isArray(first) || first[0] !== "vcard" || !Array.isArray(first[1])) return null;
  const properties = first[1] as JcardProperty[];
  const values = (name: string) => properties.filter((p) => p[0] === name);
  const textOf = (value: unknown) => (typeof value === "string" ? value.trim() : "");
  const parts = (values("n")[0]?.[3] ?? []) as unknown[];
  const part = (index: number) => textOf(Array.isArray(parts) ? parts[index] : undefined) || undefined;
  const labels = new Map(values("x-ablabel").map((p) => [String(p[1].group ?? ""), textOf(p[3])]));
  const formatted =
    textOf(values("fn")[0]?.[3]) ||
    [part(3), part(1), part(2), part(0), part(4)].filter(Boolean).join(" ") ||
    (displayName ?? "").trim();
  if (!formatted) return null;
  const orgParts = (values("org")[0]?.[3] ?? []) as unknown[];
  const orgPart = (index: number) =>
    textOf(Array.isArray(orgParts) ? orgParts[index] : index === 0 ? orgParts : undefined) || undefined;
  const org = {
    company: orgPart(0),
    department: orgPart(1),
    title: textOf(values("title")[0]?.[3]) || undefined,
  };
  const card: ContactCard = {
    name: {
      formatted_name: formatted,
      ...defined({
        first_name: part(1),
        last_name: part(0),
        middle_name: part(2),
        prefix: part(3),
        suffix: part(4),
      }),
    },
    phones: values("tel").flatMap((p) => {
      const phone = textOf(p[3]);
      if (!phone) return [];
      const waid = textOf(p[1].waid);
      const type = kindOf(p[1].type) ?? (labels.get(String(p[1].group ?? "")) || undefined);
      return [{ phone, ...defined({ type, wa_id: /^\d+$/.test(waid) ? waid : undefined }) }];
    }),
  };
  const emails = values("email").flatMap((p) =>
    textOf(p[3]) ? [{ email: textOf(p[3]), ...defined({ type: kindOf(p[1].type) }) }] : [],
  );
  const urls = values("url").flatMap((p) =>
    textOf(p[3]) ? [{ url: textOf(p[3]), ...defined({ type: kindOf(p[1].type) }) }] : [],
  );
  if (emails.length > 0) card.emails = emails;
  if (urls.length > 0) card.urls = urls;
  if (org.company || org.department || org.title) card.org = defined(org);
  return card;
}

/** A `TYPE` parameter's kind: its first value other than `VOICE` and `INTERNET` (which say nothing of home or work). */
function kindOf(type: string | string[] | undefined): string | undefined {
  const kinds = (Array.isArray(type) ? type : type ? [type] : []).filter(
    (kind) => !["VOICE", "INTERNET", "PREF"].includes(kind.toUpperCase()),
  );
  return kinds[0];
}

/** `object` without its undefined values. */
function defined<T extends Record<string, string | undefined>>(object: T): { [K in keyof T]?: string } {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: string;
  };
}
