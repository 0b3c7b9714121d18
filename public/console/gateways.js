// How the console names each gateway, for the sessions list, a session's page and the campaign
// form's session choice.

/** The console's name of each gateway (the API's Session `gateway` values). */
const GATEWAY_LABELS = {
  sandbox: "Sandbox",
  waha: "WAHA",
  evolution: "Evolution API",
  cloud_api: "WhatsApp Cloud API",
};

/** `gateway` (a Session's `gateway`) as the console names it; an unknown value as it is. */
export function gatewayLabel(gateway) {
  return GATEWAY_LABELS[gateway] ?? gateway;
}
