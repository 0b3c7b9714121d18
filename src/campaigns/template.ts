import { type GatewayKind, readConfig } from "../config";
import type { Db } from "../db/client";
import { findTemplate } from "../db/queries/templates";
import type { CampaignTemplate } from "../db/schema";
import { ApiError } from "../errors";
import { templateOwnerOf, templatesOf } from "../gateways/cloud-api/template-cache";
import { capabilitiesOf } from "../lib/gateway-kinds";
import { fillTemplate, scanTemplate } from "../lib/template";
import { type TemplateSend, templateNeeds, templateVariableErrors } from "../messages/template";

/*
 * Template campaigns (docs/campaigns.md, Campaigns and docs/gateways.md, Message templates): a campaign of
 * `type: "template"` sends one Cloud API message template to every recipient. Each value of its `variables`
 * (a body value, a button parameter) is itself a campaign template: its `{{name}}` placeholders take the
 * recipient's `variables`, as a text campaign's `content` does (src/lib/template.ts).
 */

/** Longest filled-in value: a body value and a button parameter, as a template send takes them. */
const MAX_BODY_VALUE = 1_024;
const MAX_BUTTON_PARAMETER = 2_000;

/** One fillable value of a campaign's template: its field path, its text, and its longest filled form. */
export interface TemplateValue {
  path: (string | number)[];
  text: string;
  max: number;
}

/** Every value of `template`'s variables that a recipient's `variables` fill, body first. */
export function templateValues(template: CampaignTemplate): TemplateValue[] {
  return [
    ...template.variables.body.map((text, i) => ({
      path: ["template", "variables", "body", i],
      text,
      max: MAX_BODY_VALUE,
    })),
    ...template.variables.buttons.map((button, i) => ({
      path: ["template", "variables", "buttons", i, "parameter"],
      text: button.parameter,
      max: MAX_BUTTON_PARAMETER,
    })),
  ];
}

/** The placeholder names `text` uses, once each. */
export const placeholderNames = (text: string): string[] => [
  ...new Set(scanTemplate(text).placeholders.map((p) => p.name)),
];

/**
 * The template one recipient is sent: every value of `template`'s variables with its
 * placeholders filled from the recipient's `variables` ({@link fillTemplate}).
 */
export function fillCampaignTemplate(
  template: CampaignTemplate,
  variables: Readonly<Record<string, string>>,
): TemplateSend {
  return {
    name: template.name,
    language: template.language,
    variables: {
      body: template.variables.body.map((text) => fillTemplate(text, variables)),
      buttons: template.variables.buttons.map((button) => ({
        ...button,
        parameter: fillTemplate(button.parameter, variables),
      })),
    },
  };
}

/** A campaign's session as the template check needs it. */
interface CampaignSession {
  id: string;
  gateway: string | null;
}

/**
 * Checks a template campaign against its sessions before anything is stored or charged (docs/campaigns.md,
 * Campaigns): every session must be on the `cloud_api` gateway, and on each the template must be in
 * the session's cache by name and language and `APPROVED`, its variables fitting it (counts only:
 * placeholders fill values, never add them; messages/template.ts `templateVariableErrors`). Each
 * session's cache is read again from Meta first when older than 5 minutes, best effort, as a
 * template send does (src/routes/messages/messages.handlers.ts).
 * @throws ApiError `validation_failed` (422) naming `type` for a session on another gateway, or
 *   the variables that do not fit; `template_not_found` (422) naming the session.
 */
export async function requireCampaignTemplate(
  env: Env,
  db: Db,
  accountId: string,
  sessions: CampaignSession[],
  template: CampaignTemplate,
): Promise<void> {
  const fallback = readConfig(env).CHATAPP_GATEWAY;
  const other = sessions.find((s) => !capabilitiesOf((s.gateway ?? fallback) as GatewayKind).sendsTemplates);
  if (other) {
    throw new ApiError("validation_failed", "The request has invalid fields.", {
      fields: {
        type: [`template campaigns need every session on the cloud_api gateway; ${other.id} is not`],
      },
    });
  }
  await Promise.all(
    sessions.map(async (session) => {
      try {
        await templatesOf(db, await templateOwnerOf(env, db, accountId, session.id), { refresh: false });
      } catch {
        // The check below decides on the cache as it is.
      }
    }),
  );
  for (const session of sessions) {
    const row = await findTemplate(db, accountId, session.id, template.name, template.language);
    if (row?.status !== "APPROVED") {
      throw new ApiError(
        "template_not_found",
        row
          ? `Template ${template.name} (${template.language}) is ${row.status} on session ${session.id}; only APPROVED templates can be sent.`
          : `Session ${session.id} has no template ${template.name} (${template.language}); list its templates to refresh them.`,
      );
    }
    const errors = templateVariableErrors(templateNeeds(row.components), template.variables);
    if (errors)
      throw new ApiError("validation_failed", "The template's variables do not fit it.", { fields: errors });
  }
}
