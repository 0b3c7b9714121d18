// Recipients of a campaign from pasted CSV, checked in the browser before they are sent: the
// numbers' shape and each placeholder's value. The API checks again (libphonenumber's full
// metadata, which the browser does not carry), and its per-field errors name the recipient's index
// in `recipients`, which `lineOf` turns back into the CSV line.

/**
 * Parses CSV text per RFC 4180: fields separated by commas, records by CRLF or LF; a field in
 * double quotes may hold commas, line breaks and `""` (one quote). A byte order mark is dropped.
 * @param {string} text
 * @returns {{fields: string[], line: number}[]} each record with the line it starts on (1-based)
 */
export function parseCsv(text) {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const records = [];
  let fields = [];
  let field = "";
  let quoted = false;
  let line = 1;
  let start = 1;
  let i = 0;
  const endRecord = () => {
    fields.push(field);
    records.push({ fields, line: start });
    fields = [];
    field = "";
  };
  while (i < source.length) {
    const ch = source[i];
    if (quoted) {
      if (ch === '"' && source[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (ch === '"') quoted = false;
      else {
        if (ch === "\n") line++;
        field += ch;
      }
      i++;
      continue;
    }
    if (ch === '"' && field.trim() === "") {
      quoted = true;
      field = "";
    } else if (ch === ",") {
      fields.push(field);
      field = "";
    } else if (ch === "\r" && source[i + 1] === "\n") {
      endRecord();
      i++;
      start = ++line;
    } else if (ch === "\n" || ch === "\r") {
      endRecord();
      start = ++line;
    } else field += ch;
    i++;
  }
  if (field !== "" || fields.length > 0) endRecord();
  return records;
}

/** A variable name of the campaigns API (src/campaigns/recipients.ts `VARIABLE_NAME`). */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

// `{{ name }}` or `{ name }`, as the API reads templates (src/lib/template.ts).
const PLACEHOLDER = /\{\{([^{}]*)\}\}|\{([^{}]*)\}/g;

/** The distinct placeholder names of `template`, in order. */
export function placeholderNames(template) {
  const names = [];
  for (const match of template.matchAll(PLACEHOLDER)) {
    const name = (match[1] ?? match[2] ?? "").trim();
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** `template` with each placeholder that `values` has filled in; the others stay as written. */
export function fillTemplate(template, values) {
  return template.replace(PLACEHOLDER, (written, double, single) => {
    const name = (double ?? single ?? "").trim();
    return Object.hasOwn(values, name) ? values[name] : written;
  });
}

/**
 * Whether `input` looks like an international number: 7–15 digits after an optional `+`, the
 * first not 0, with spaces, dashes, dots and brackets allowed (E.164's shape; the API then checks
 * the number against its country's plan).
 */
export function looksLikeNumber(input) {
  return /^\+?[1-9]\d{6,14}$/.test(input.trim().replace(/[\s\-.()]/g, ""));
}

/**
 * Reads pasted CSV as campaign recipients for `template`. The header row is `to_number` then one
 * column per variable; an empty cell leaves that variable out. Blank lines are skipped.
 * @param {string} text the CSV
 * @param {string} template the campaign's content
 * @returns {{
 *   header: string[],
 *   headerProblems: string[],
 *   rows: {line: number, to_number: string, variables: Record<string, string>, problems: string[]}[],
 * }} every data row with its CSV line and its problems (none when it may be sent)
 */
export function readRecipients(text, template) {
  const records = parseCsv(text).filter(({ fields }) => fields.some((value) => value.trim() !== ""));
  const headerProblems = [];
  const rows = [];
  const first = records.shift();
  if (!first) return { header: [], headerProblems, rows };
  const header = first.fields.map((name) => name.trim());
  const numberColumn = header.findIndex((name) => name.toLowerCase() === "to_number");
  if (numberColumn === -1) headerProblems.push("The header row has no to_number column.");
  for (const name of header)
    if (name.toLowerCase() !== "to_number" && !VARIABLE_NAME.test(name))
      headerProblems.push(`Column "${name}" is not a variable name (letters, digits and _).`);
  const needed = placeholderNames(template);
  for (const { fields, line } of records) {
    const problems = [];
    const variables = {};
    header.forEach((name, column) => {
      const value = fields[column]?.trim() ?? "";
      if (column !== numberColumn && value !== "") variables[name] = value;
    });
    const toNumber = numberColumn === -1 ? "" : (fields[numberColumn]?.trim() ?? "");
    if (fields.length !== header.length)
      problems.push(`${fields.length} fields where the header has ${header.length}`);
    if (!toNumber) problems.push("no number");
    else if (!looksLikeNumber(toNumber)) problems.push(`"${toNumber}" is not an international number`);
    const missing = needed.filter((name) => !Object.hasOwn(variables, name));
    if (missing.length > 0) problems.push(`no value for ${missing.map((name) => `{{${name}}}`).join(", ")}`);
    rows.push({ line, to_number: toNumber, variables, problems });
  }
  return { header, headerProblems, rows };
}
