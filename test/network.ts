import { FetchInterceptor } from "@mswjs/interceptors/fetch";
import { defineNetwork, InterceptorSource } from "msw/experimental";
import { afterAll, afterEach, beforeAll } from "vitest";

/**
 * The fake network for gateway tests: Mock Service Worker intercepting `fetch` in the Workers
 * test runtime (the Worker and its Durable Objects share the tests' isolate, so their calls are
 * intercepted too). Handlers stand in for a gateway at its HTTP boundary; a request no handler
 * matches fails the call, as an unreachable host would.
 */
export const network = defineNetwork({
  sources: [new InterceptorSource({ interceptors: [new FetchInterceptor()] })],
  onUnhandledFrame: "error",
  context: { quiet: true },
});

/** Turns the fake network on for the calling test file; handlers are reset after each test. */
export function useNetwork(): void {
  beforeAll(() => network.enable());
  afterEach(() => network.resetHandlers());
  afterAll(() => network.disable());
}
