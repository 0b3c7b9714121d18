// Writes fakes/cloud-api/meta-openapi.json: the part of Meta's WhatsApp Cloud API OpenAPI document
// that the Cloud API gateway uses, so tests (which run without internet) can check against it.
//
// Source: github.com/facebook/openapi (MIT), file business-messaging-api_v23.0.yaml. Run:
//
//   git -C <clone of facebook/openapi> show <commit>:business-messaging-api_v23.0.yaml > /tmp/meta.yaml
//   node scripts/meta-openapi-subset.mjs /tmp/meta.yaml <commit>
//
// It keeps the operations of OPERATIONS (the webhook payload's path among them), the schemas of
// EXTRA_SCHEMAS, and every component they reach through a $ref or a discriminator's mapping
// (transitively, of any kind: schemas, parameters, headers), as the document has them, so every
// `#/components/...` pointer stays valid. It adds one header field, `x-subset`: the source (repository, file, commit, the input's
// SHA-256, the license notice) and `webhookRenames` (see below). fakes/cloud-api/schema.ts reads
// the result; the readings of the document's gaps live there, not here.

import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { parse } from "yaml";

const OUTPUT = "fakes/cloud-api/meta-openapi.json";
const FILE = "business-messaging-api_v23.0.yaml";
const LICENSE = [
  "MIT License. Copyright (c) Meta Platforms, Inc. and affiliates.",
  'Permission is hereby granted, free of charge, to any person obtaining a copy of this software and associated documentation files (the "Software"), to deal in the Software without restriction, including without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is furnished to do so, subject to the following conditions:',
  "The above copyright notice and this permission notice shall be included in all copies or substantial portions of the Software.",
  'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.',
].join("\n\n");

/** The operations the gateway and the fake use: [path, method]. */
const OPERATIONS = [
  ["/{Version}/{Phone-Number-ID}/messages", "post"], // sendMessage
  ["/{Version}/{Phone-Number-ID}", "get"], // getPhoneNumberById
  ["/{Version}/{WABA-ID}/phone_numbers", "get"], // getWhatsAppBusinessAccountPhoneNumbers
  ["/{Version}/{WABA-ID}/message_templates", "get"], // getTemplateByNameDefaultFields
  ["/{Version}/{WABA-ID}/message_templates", "post"], // createAuthenticationTemplateWOtpCopyCodeButton
  ["/whatsapp/webhooks", "post"], // the webhook payload (WebhookPayload)
];

/**
 * Schemas no kept operation reaches by $ref but schema.ts reads: GraphAPIError (the error shape
 * the phone number operation answers, which the send operation does not declare) and
 * CallRequestPayload (the only definition of `biz_opaque_callback_data`).
 */
const EXTRA_SCHEMAS = [
  "GraphAPIError",
  "CallRequestPayload",
  "MarkMessageRequestPayload",
  "MarkMessageResponsePayload",
];

/**
 * The document joins several smaller documents; where two defined a schema of the same name, the
 * later one was renamed with a suffix (`TextMessage_2`) but the $refs inside it were not. The
 * webhook schemas are the document's last block, from WebhookPayload to the end; a $ref from that
 * block to a name the block itself redefines with a suffix is read as pointing at that
 * redefinition. Returns { name: suffixed name }; the suffixed schemas are kept too.
 */
function webhookRenames(schemas) {
  const names = Object.keys(schemas);
  const start = names.indexOf("WebhookPayload");
  if (start < 0) throw new Error("The document has no WebhookPayload schema.");
  const block = names.slice(start);
  const referenced = new Set();
  for (const name of block) for (const ref of refsOf(schemas[name])) referenced.add(ref.split("/").pop());
  const renames = {};
  for (const name of block) {
    const match = /^(.+)_(\d+)$/.exec(name);
    if (!match || !referenced.has(match[1]) || block.includes(match[1])) continue;
    if (renames[match[1]]) throw new Error(`Two redefinitions of ${match[1]} in the webhook block.`);
    renames[match[1]] = name;
  }
  return renames;
}

/** Every pointer inside a value: each $ref and each target of a discriminator's mapping. */
function refsOf(value, found = []) {
  if (Array.isArray(value)) for (const item of value) refsOf(item, found);
  else if (value && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) {
      if (key === "$ref" && typeof child === "string") found.push(child);
      else if (key === "discriminator" && child?.mapping) found.push(...Object.values(child.mapping));
      else refsOf(child, found);
    }
  }
  return found;
}

function main() {
  const [input, commit] = process.argv.slice(2);
  if (!input || !/^[0-9a-f]{40}$/.test(commit ?? "")) {
    throw new Error("Usage: node scripts/meta-openapi-subset.mjs <path to the yaml> <40-hex commit>");
  }
  const text = readFileSync(input, "utf8");
  const doc = parse(text);
  const renames = webhookRenames(doc.components.schemas);

  const paths = {};
  for (const [path, method] of OPERATIONS) {
    const item = doc.paths[path];
    if (!item?.[method]) throw new Error(`The document has no ${method.toUpperCase()} ${path}.`);
    paths[path] ??= item.parameters ? { parameters: item.parameters } : {};
    paths[path][method] = item[method];
  }

  // Components reached from the kept paths and the extra roots, transitively.
  const components = {};
  const pending = [
    ...refsOf(paths),
    ...[...EXTRA_SCHEMAS, ...Object.values(renames)].map((name) => `#/components/schemas/${name}`),
  ];
  while (pending.length > 0) {
    const ref = pending.pop();
    const [hash, section, kind, name, ...rest] = ref.split("/");
    if (hash !== "#" || section !== "components" || !kind || !name || rest.length > 0) {
      throw new Error(`Unexpected $ref ${ref}`);
    }
    if (components[kind]?.[name]) continue;
    const target = doc.components[kind]?.[name];
    if (!target) throw new Error(`Dangling $ref ${ref}`);
    components[kind] ??= {};
    components[kind][name] = target;
    pending.push(...refsOf(target));
  }
  // The document's own order, so the file diffs well when the document changes.
  const ordered = {};
  for (const kind of Object.keys(doc.components)) {
    if (!components[kind]) continue;
    ordered[kind] = {};
    for (const name of Object.keys(doc.components[kind])) {
      if (components[kind][name]) ordered[kind][name] = components[kind][name];
    }
  }

  const subset = {
    "x-subset": {
      repository: "https://github.com/facebook/openapi",
      file: FILE,
      commit,
      sha256: createHash("sha256").update(text).digest("hex"),
      generatedBy: `node scripts/meta-openapi-subset.mjs <${FILE}> ${commit}`,
      license: LICENSE,
      webhookRenames: renames,
    },
    openapi: doc.openapi,
    info: { title: doc.info.title, version: doc.info.version },
    paths,
    components: ordered,
  };
  writeFileSync(OUTPUT, `${JSON.stringify(subset, null, 2)}\n`);
  const counts = Object.entries(ordered).map(([kind, items]) => `${Object.keys(items).length} ${kind}`);
  console.log(`${OUTPUT}: ${Object.keys(paths).length} paths, ${counts.join(", ")}`);
}

main();
