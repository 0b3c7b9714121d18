import { formatTimestamp } from "../lib/time";

/** The fields of a cached template the API shows (a `message_templates` row, or an event's snapshot of one). */
export interface TemplateView {
  templateId: string;
  name: string;
  language: string;
  category: string | null;
  status: string;
  /** JSON array, as Meta gave it. */
  components: string;
  reason: string | null;
  /** Epoch ms. */
  syncedAt: number;
}

/**
 * A message template as `GET /v1/chatapp/sessions/{id}/templates` shows it: Meta's `id`, `name`,
 * `language`, `category`, `status`, `components` (as Meta gave them), the last status update's
 * `reason` (or null) and `synced_at`, when Meta last gave it.
 */
export function toTemplateRecord(row: TemplateView) {
  return {
    id: row.templateId,
    name: row.name,
    language: row.language,
    category: row.category,
    status: row.status,
    reason: row.reason,
    components: JSON.parse(row.components) as Record<string, unknown>[],
    synced_at: formatTimestamp(row.syncedAt),
  };
}

export type TemplateRecord = ReturnType<typeof toTemplateRecord>;

/**
 * The `data` of a `template.status_changed` event (src/events/catalogue.ts) from its snapshot:
 * `{ template, reason, chatapp_session_ids }`.
 */
export function toTemplateStatusRecord(snapshot: Record<string, unknown>) {
  const { template, reason, sessionIds } = snapshot as {
    template: TemplateView;
    reason: string | null;
    sessionIds: string[];
  };
  return { template: toTemplateRecord(template), reason, chatapp_session_ids: sessionIds };
}
