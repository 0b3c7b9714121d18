import type { AppRow } from "../db/queries/apps";
import type { OtpTemplate } from "../db/schema";
import { renderTemplate } from "../lib/template";
import type { SendRequest } from "../messages/send";
import type { TemplateSend } from "../messages/template";

/**
 * What stands for each digit of a code in the stored message: the code itself is readable only on
 * the recipient's phone (it travels in the queue message and the session's outbox until the
 * gateway accepts it, then is dropped; a failover job carries it too, src/otp/failover.ts).
 */
const CODE_MASK = "•";

/** A channel a code goes out on: its session, and the authentication template on a Cloud API session. */
export interface CodeChannel {
  sessionId: string;
  /** The app's `otp_template` on a Cloud API session; null on the other gateways (codes go as text). */
  template: OtpTemplate | null;
}

/**
 * An authentication template send carrying `code` (Meta, "Authentication templates → Sending"):
 * the code as the body's `{{1}}` and as the parameter of the copy-code button, button 0, sent as
 * a `url` button parameter (messages/template.ts; src/gateways/cloud-api/template-message.ts).
 */
function otpTemplateSend(template: OtpTemplate, code: string): TemplateSend {
  return {
    name: template.name,
    language: template.language,
    variables: { body: [code], buttons: [{ index: 0, sub_type: "url", parameter: code }] },
  };
}

/**
 * What a code's message is: the app's text with the code masked (`content`, stored) and in clear
 * (`otp.secretContent`, only in the queue message); on a Cloud API session the app's
 * authentication template instead, its variables masked in the stored `metadata.template` and in
 * clear, as the template send's JSON, only in the queue message.
 */
function codeMessage(
  app: AppRow,
  template: OtpTemplate | null,
  code: string,
  otpId: string,
): Pick<SendRequest, "type" | "content" | "template" | "otp"> {
  const masked = CODE_MASK.repeat(code.length);
  if (template) {
    return {
      type: "template",
      content: null,
      template: otpTemplateSend(template, masked),
      otp: { id: otpId, secretContent: JSON.stringify(otpTemplateSend(template, code)) },
    };
  }
  return {
    type: "text",
    content: renderTemplate(app.messageTemplate, { code: masked, app_name: app.name }),
    otp: { id: otpId, secretContent: renderTemplate(app.messageTemplate, { code, app_name: app.name }) },
  };
}

/**
 * The send of `code` of OTP `otpId` to `toNumber` (E.164) through `channel`, for
 * messages/send.ts `sendMessages`: one recipient, sent now, in the OTP lane, rendered with the
 * app's current settings ({@link codeMessage}).
 */
export function codeSendRequest(
  app: AppRow,
  channel: CodeChannel,
  send: { otpId: string; toNumber: string; code: string },
): SendRequest {
  return {
    accountId: app.accountId,
    sessionId: channel.sessionId,
    recipients: [send.toNumber],
    ...codeMessage(app, channel.template, send.code, send.otpId),
    mediaUrl: null,
    delayBetween: 0,
    scheduledAt: null,
  };
}
