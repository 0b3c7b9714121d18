import { FetchInterceptor } from "@mswjs/interceptors/fetch";
import { defineNetwork, InterceptorSource, NetworkReadyState } from "msw/experimental";
import { afterAll, afterEach, beforeAll } from "vitest";
import { mediaHostHandlers } from "./media-host";

/**
 * The fake network of every test: Mock Service Worker intercepting `fetch` in the Workers test
 * runtime (the Worker and its Durable Objects share the tests' isolate, so their calls are
 * intercepted too). Handlers stand in for a third party at its HTTP boundary: a gateway, a
 * webhook receiver, and by default the public media host of test/media-host.ts, which every send
 * of media fetches from. A request no handler matches fails the call, as an unreachable host would.
 */
export const network = defineNetwork({
  sources: [new InterceptorSource({ interceptors: [new FetchInterceptor()] })],
  handlers: mediaHostHandlers,
  onUnhandledFrame: "error",
  context: { quiet: true },
});

let inUse = false;

/**
 * Turns the fake network on for the calling test file; handlers added with `network.use` are
 * dropped after each test (the defaults stay). test/setup.ts calls it for every file, so a
 * file's own call changes nothing.
 */
export function useNetwork(): void {
  if (inUse) return;
  inUse = true;
  beforeAll(() => {
    if (network.readyState === NetworkReadyState.DISABLED) return network.enable();
  });
  afterEach(() => network.resetHandlers());
  afterAll(() => {
    if (network.readyState === NetworkReadyState.ENABLED) return network.disable();
  });
}
