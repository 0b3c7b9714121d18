// The API's own OpenAPI document (`/openapi.json`, generated from the route schemas), read once
// per page load: the console takes lists such as the key scopes and the event types from it, so
// they have one source, the server's.

let document = null;

/** The OpenAPI document, fetched once; rejects when it cannot be read. */
export function apiDocument() {
  document ??= fetch("/openapi.json", { headers: { Accept: "application/json" } }).then((response) => {
    if (!response.ok) throw new Error(`The API document answered ${response.status}.`);
    return response.json();
  });
  document.catch(() => {
    document = null;
  });
  return document;
}

/** The values of `components.schemas.<schema>.properties.<property>` (or of its items): its enum. */
export async function schemaEnum(schema, property) {
  const found = (await apiDocument()).components?.schemas?.[schema]?.properties?.[property];
  return found?.enum ?? found?.items?.enum ?? [];
}
