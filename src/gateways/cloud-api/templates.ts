import { z } from "zod";
import { type GatewayHttp, gatewayRequest } from "../http";

/*
 * A WhatsApp Business Account's message templates at Meta: `GET` and `POST
 * /{Version}/{WABA-ID}/message_templates` (Meta's OpenAPI document business-messaging-api_v23.0.yaml,
 * operations `getTemplateByNameDefaultFields` and the "Create … template" operations; Graph API
 * reference "WhatsApp Business Account > Message Templates"). Every field read or sent is one of
 * those: `id`, `name`, `language`, `category`, `status`, `components`; paging by `limit`, `after`,
 * `paging.cursors.after` and `paging.next` (the document's `Paging` / `Cursors`).
 */

/** The template categories Meta takes on create (the document's create examples). */
export const TEMPLATE_CATEGORIES = ["AUTHENTICATION", "MARKETING", "UTILITY"] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

/** A template as Meta lists it (the rest of its fields is let through and not kept). */
const MetaTemplate = z.looseObject({
  id: z.string().min(1),
  name: z.string().min(1),
  language: z.string().min(1),
  category: z.string().min(1),
  status: z.string().min(1),
  components: z.array(z.record(z.string(), z.unknown())).default([]),
});

/** One page of the list: `data`, and `paging` with `cursors.after` and `next` while more follow. */
const TemplatePage = z.looseObject({
  data: z.array(MetaTemplate),
  paging: z
    .looseObject({
      cursors: z.looseObject({ after: z.string().optional() }).optional(),
      next: z.string().optional(),
    })
    .optional(),
});

/** A template as Meta gives it. */
export type MetaTemplate = z.output<typeof MetaTemplate>;

/** Templates asked for per page: Meta's page size for this edge goes to 100 ("limit"). */
export const TEMPLATE_PAGE_SIZE = 100;
/** Most pages read in one sync (so at most 2,000 templates): a bound on a looping `paging.next`. */
export const MAX_TEMPLATE_PAGES = 20;

/**
 * Every template of WABA `wabaId`, following `paging.cursors.after` while Meta gives a
 * `paging.next`, for at most {@link MAX_TEMPLATE_PAGES} pages.
 * @throws GatewayError as `gatewayRequest` does (Meta's refusal is permanent, with its error).
 */
export async function fetchTemplates(http: GatewayHttp, wabaId: string): Promise<MetaTemplate[]> {
  const fields = "id,name,language,category,status,components";
  const templates: MetaTemplate[] = [];
  let after: string | undefined;
  for (let page = 0; page < MAX_TEMPLATE_PAGES; page++) {
    const query = new URLSearchParams({ fields, limit: String(TEMPLATE_PAGE_SIZE) });
    if (after) query.set("after", after);
    const answer = await gatewayRequest(http, {
      method: "GET",
      path: `/${encodeURIComponent(wabaId)}/message_templates?${query}`,
      schema: TemplatePage,
    });
    templates.push(...answer.data);
    after = answer.paging?.cursors?.after;
    if (!answer.paging?.next || !after) break;
  }
  return templates;
}

/** A template to submit: only these top-level fields are sent (nothing else of the caller's). */
export interface NewTemplate {
  name: string;
  language: string;
  category: TemplateCategory;
  components: Record<string, unknown>[];
}

/** Meta's answer to a create: `{ id, status, category }` (e.g. `PENDING`, and the category it chose). */
const CreatedTemplate = z.looseObject({
  id: z.string().min(1),
  status: z.string().min(1),
  category: z.string().min(1).optional(),
});

/**
 * Submits `template` to WABA `wabaId` for review. @returns Meta's `id`, `status` (usually
 * `PENDING`) and `category` (Meta may recategorise; the asked one when it gives none).
 * @throws GatewayError as `gatewayRequest` does: a refusal is permanent with Meta's error.
 */
export async function submitTemplate(
  http: GatewayHttp,
  wabaId: string,
  template: NewTemplate,
): Promise<{ id: string; status: string; category: string }> {
  const answer = await gatewayRequest(http, {
    method: "POST",
    path: `/${encodeURIComponent(wabaId)}/message_templates`,
    body: {
      name: template.name,
      language: template.language,
      category: template.category,
      components: template.components,
    },
    schema: CreatedTemplate,
  });
  return { id: answer.id, status: answer.status, category: answer.category ?? template.category };
}
