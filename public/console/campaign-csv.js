// Recipients of a campaign from pasted CSV, checked in the browser before they are sent: the
// numbers' shape and each placeholder's value. The API checks again (libphonenumber's full
// metadata, which the browser does not carry), and its per-field errors name the recipient's index
// in `recipients`, which `lineOf` turns back into the CSV line.

/** Papa Parse's build served by this service (public/vendor/papaparse/, MIT, from the npm package). */
const PAPAPARSE_URL = "/vendor/papaparse/papaparse-5.7.1.min.js";

/**
 * Papa Parse, loaded once as a classic script (its UMD build defines the global `Papa`; a module
 * import would not). The console's Content-Security-Policy allows it ('self'). Null when it could
 * not be loaded: {@link parseCsv} then throws, and the rest of the console works on.
 * @type {any}
 */
const Papa = await new Promise((resolve) => {
  if (window.Papa) {
    resolve(window.Papa);
    return;
  }
  const script = document.createElement("script");
  script.src = PAPAPARSE_URL;
  script.addEventListener("load", () => resolve(window.Papa ?? null));
  script.addEventListener("error", () => resolve(null));
  document.head.append(script);
});

/**
 * Parses CSV text per RFC 4180 with Papa Parse: fields separated by commas, records by line
 * breaks; a field in double quotes may hold commas, line breaks and `""` (one quote). A byte order
 * mark is dropped, and CRLF and CR are read as LF (a textarea's value has LF only), also inside
 * quotes. A line break after the last record ends it; a blank line is a record of one empty field.
 * @param {string} text
 * @returns {{fields: string[], line: number}[]} each record with the line it starts on (1-based)
 * @throws {Error} when Papa Parse could not be loaded
 */
export function parseCsv(text) {
  if (!Papa) throw new Error("The CSV reader (Papa Parse) could not be loaded.");
  const source = (text.startsWith("\uFEFF") ? text.slice(1) : text).replace(/\r\n?/g, "\n");
  if (source === "") return [];
  const { data } = Papa.parse(source, { delimiter: ",", newline: "\n", quoteChar: '"', escapeChar: '"' });
  const last = data.at(-1);
  if (source.endsWith("\n") && last?.length === 1 && last[0] === "") data.pop();
  // A record starts on the line after the previous one's last: one line, plus each line break
  // inside its quoted fields.
  let line = 1;
  return data.map((fields) => {
    const record = { fields, line };
    line += 1 + fields.reduce((breaks, field) => breaks + field.split("\n").length - 1, 0);
    return record;
  });
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
