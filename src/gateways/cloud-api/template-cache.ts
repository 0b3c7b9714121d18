import { type CloudApiSettings, gatewaySettingsOf, readConfig } from "../../config";
import type { Db } from "../../db/client";
import { numberOfSession } from "../../db/queries/cloud-api";
import { findSession } from "../../db/queries/sessions";
import {
  cachedTemplates,
  type MessageTemplateRow,
  replaceTemplates,
  upsertTemplate,
} from "../../db/queries/templates";
import { ApiError } from "../../errors";
import { GatewayError } from "../gateway";
import { type CloudApiNumber, graphErrorOf, graphHttp } from "./graph";
import { fetchTemplates, type MetaTemplate, type NewTemplate, submitTemplate } from "./templates";

/*
 * The cache of a Cloud API session's templates in D1 (`message_templates`, docs/gateways.md,
 * "Message templates"): read from Meta when older than TEMPLATE_CACHE_SECONDS, or when asked to.
 */

/**
 * How long a session's template list read from Meta is served without asking Meta again: 5
 * minutes (this API's rule; status changes arrive sooner by Meta's `message_template_status_update`
 * webhook, which updates the cache itself).
 */
export const TEMPLATE_CACHE_SECONDS = 300;

/** A Cloud API session's number and the settings to reach Meta with. */
export interface TemplateOwner {
  settings: CloudApiSettings;
  number: CloudApiNumber;
  accountId: string;
  sessionId: string;
}

/**
 * Account `accountId`'s Cloud API session `sessionId`, ready to call Meta as.
 * @throws ApiError `not_found` (404) for a session that is not the account's,
 *   `not_supported_by_gateway` (409) for a session on another gateway.
 */
export async function templateOwnerOf(
  env: Env,
  db: Db,
  accountId: string,
  sessionId: string,
): Promise<TemplateOwner> {
  const session = await findSession(db, accountId, sessionId);
  if (!session) throw new ApiError("not_found", "No such session.");
  const config = readConfig(env);
  const settings = gatewaySettingsOf(config, "cloud_api");
  const row = await numberOfSession(db, sessionId);
  if ((session.gateway ?? config.CHATAPP_GATEWAY) !== "cloud_api" || settings?.kind !== "cloud_api" || !row) {
    throw new ApiError(
      "not_supported_by_gateway",
      "Message templates are for sessions on the cloud_api gateway.",
    );
  }
  return {
    settings,
    accountId,
    sessionId,
    number: {
      sessionRowId: sessionId,
      phoneNumberId: row.phoneNumberId,
      wabaId: row.wabaId,
      accessTokenSealed: row.accessTokenSealed,
      throughputMps: row.throughputMps,
    },
  };
}

/** A session's templates as served: the rows, when Meta last gave the list, and whether that failed now. */
export interface TemplateList {
  rows: MessageTemplateRow[];
  /** Epoch ms of the last whole read from Meta. */
  syncedAt: number;
  /** True when Meta could not be reached just now and the older cache is served. */
  stale: boolean;
}

/**
 * The session's templates: the cache when read from Meta less than {@link TEMPLATE_CACHE_SECONDS}
 * ago and `refresh` is false, else read from Meta (every page) and cached first. When Meta cannot
 * be reached (timeout, network, 5xx) and a cache exists, the cache is served with `stale: true`.
 * @throws ApiError `gateway_unavailable` (503) when Meta cannot be reached and nothing is cached,
 *   `gateway_rejected` (502, Meta's message) when Meta refuses the call (e.g. a revoked token).
 */
export async function templatesOf(
  db: Db,
  owner: TemplateOwner,
  options: { refresh: boolean; now?: number },
): Promise<TemplateList> {
  const now = options.now ?? Date.now();
  const cached = await cachedTemplates(db, owner.accountId, owner.sessionId);
  if (!options.refresh && cached.syncedAt !== null && now - cached.syncedAt < TEMPLATE_CACHE_SECONDS * 1000) {
    return { rows: cached.rows, syncedAt: cached.syncedAt, stale: false };
  }
  let templates: MetaTemplate[];
  try {
    templates = await fetchTemplates(await graphHttp(owner.settings, owner.number), owner.number.wabaId);
  } catch (error) {
    const graph = graphErrorOf(error);
    if (graph && error instanceof GatewayError && error.permanent) {
      throw new ApiError("gateway_rejected", `Meta refused to list the templates: ${graph.message}`);
    }
    if (cached.syncedAt !== null) return { rows: cached.rows, syncedAt: cached.syncedAt, stale: true };
    throw new ApiError("gateway_unavailable", "Meta could not be reached to list the templates; try again.");
  }
  // One row per (name, language): the list's first wins should Meta repeat one.
  const seen = new Set<string>();
  const rows = templates
    .map((t) => rowOf(owner, t, now))
    .filter((row) => {
      const key = `${row.name}\u0000${row.language}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  await replaceTemplates(db, owner.sessionId, rows, now);
  rows.sort((a, b) => (a.name === b.name ? cmp(a.language, b.language) : cmp(a.name, b.name)));
  return { rows, syncedAt: now, stale: false };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function rowOf(owner: TemplateOwner, template: MetaTemplate, now: number): MessageTemplateRow {
  return {
    sessionId: owner.sessionId,
    accountId: owner.accountId,
    wabaId: owner.number.wabaId,
    templateId: template.id,
    name: template.name,
    language: template.language,
    category: template.category,
    status: template.status,
    components: JSON.stringify(template.components),
    reason: null,
    syncedAt: now,
    statusAt: now,
  };
}

/**
 * Submits `template` to Meta for review and caches it with Meta's answer (`id`, `status`, e.g.
 * `PENDING`, `category`). @throws ApiError `template_rejected` (422, Meta's message) when Meta
 * refuses it, `gateway_unavailable` (503) when Meta could not be reached or answered unreadably
 * (whether it took the template is then unknown: the next list shows it).
 */
export async function createTemplate(
  db: Db,
  owner: TemplateOwner,
  template: NewTemplate,
  now = Date.now(),
): Promise<MessageTemplateRow> {
  let created: Awaited<ReturnType<typeof submitTemplate>>;
  try {
    created = await submitTemplate(
      await graphHttp(owner.settings, owner.number),
      owner.number.wabaId,
      template,
    );
  } catch (error) {
    const graph = graphErrorOf(error);
    if (graph && error instanceof GatewayError && error.permanent) {
      const detail = graph.details ? `${graph.message} ${graph.details}` : graph.message;
      throw new ApiError("template_rejected", `Meta refused the template: ${detail}`);
    }
    throw new ApiError(
      "gateway_unavailable",
      "Meta could not be reached to create the template; list the templates to see whether it was.",
    );
  }
  const row: MessageTemplateRow = {
    ...rowOf(owner, { ...template, id: created.id, status: created.status, category: created.category }, now),
  };
  await upsertTemplate(db, row);
  return row;
}
