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
