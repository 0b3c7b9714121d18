import { createRouter } from "../router";
import * as handlers from "./otp-stats.handlers";
import * as routes from "./otp-stats.routes";

/** `/v1/apps/{id}/otp-stats`: an app's verification statistics (docs/otp.md, OTP statistics). */
export const otpStatsRoutes = createRouter().openapi(routes.stats, handlers.stats);
