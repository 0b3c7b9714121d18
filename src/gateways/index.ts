import type { GatewaySettings } from "../config";
import { CloudApiGateway } from "./cloud-api";
import type { CloudApiNumber } from "./cloud-api/graph";
import { EvolutionGateway } from "./evolution";
import type { ChatGateway } from "./gateway";
import type { SandboxGateway } from "./sandbox";
import { WahaGateway } from "./waha";

/**
 * The gateway `settings` name (config.ts `CHATAPP_GATEWAY`): WAHA and Evolution API are reached
 * over HTTP with the settings given; the sandbox lives in the calling session object's own
 * storage, so that object builds it: `sandbox` is called only when the sandbox is configured, and
 * may throw when the object holds no session. The Cloud API sends as the session's own business
 * number, which `cloudApiNumber` gives (null when the object holds none).
 *
 * What each gateway can do is declared by name in src/lib/gateway-kinds.ts (on the lowest floor,
 * as floors below this one ask it), and by the optional members of {@link ChatGateway}
 * (`typing`, `health`, `ownReceipts`, `standIn`, ...). A new gateway is its folder here, a case
 * below, its line of capabilities there, its settings in config.ts (`GatewaySettings` and its
 * reader) and its name in lint/gateway-names.grit.
 */
export function createGateway(
  settings: GatewaySettings,
  sandbox: () => SandboxGateway,
  cloudApiNumber: () => CloudApiNumber | null,
): ChatGateway {
  switch (settings.kind) {
    case "waha":
      return new WahaGateway(settings);
    case "evolution":
      return new EvolutionGateway(settings);
    case "cloud_api":
      return new CloudApiGateway(settings, cloudApiNumber());
    case "sandbox":
      return sandbox();
  }
}
