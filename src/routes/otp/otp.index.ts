import { createRouter } from "../router";
import * as handlers from "./otp.handlers";
import * as routes from "./otp.routes";

/**
 * One-time codes (docs/otp.md, Sending and verifying), mounted at `/v1`: `/v1/apps/{id}/otp` and
 * `/v1/otp/{id}[/verify|/resend]`.
 */
export const otpRoutes = createRouter()
  .openapi(routes.send, handlers.send)
  .openapi(routes.show, handlers.show)
  .openapi(routes.verify, handlers.verify)
  .openapi(routes.resend, handlers.resend);
