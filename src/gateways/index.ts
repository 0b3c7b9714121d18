import type { GatewaySettings } from "../config";
import { EvolutionGateway } from "./evolution";
import type { ChatGateway } from "./gateway";
import type { SandboxGateway } from "./sandbox";
import { WahaGateway } from "./waha";

/**
 * The gateway `settings` name (config.ts `CHATAPP_GATEWAY`): WAHA and Evolution API are reached
 * over HTTP with the settings given; the sandbox lives in the calling session object's own
 * storage, so that object builds it: `sandbox` is called only when the sandbox is configured, and
 * may throw when the object holds no session.
 */
export function createGateway(settings: GatewaySettings, sandbox: () => SandboxGateway): ChatGateway {
  switch (settings.kind) {
    case "waha":
      return new WahaGateway(settings);
    case "evolution":
      return new EvolutionGateway(settings);
    case "sandbox":
      return sandbox();
  }
}
