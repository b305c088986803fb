/**
 * Outbound HTTP. `createSafeFetch` (Node, connect-time check) and `createSafeFetchPortable`
 * (Deno, Bun, or any standard fetch) for page fetches; `createApiFetch` (ofetch) for backends.
 * The policy and the typed errors live in `core/net/`, so operations can catch them.
 */
export { createSafeFetch, fetchPage } from "./safe-fetch.ts";
export { createSafeFetchPortable, detectPinMode, portableResolver, type PinMode, type PortableOptions } from "./portable.ts";
export { createApiFetchPort, type ApiFetchOptions } from "./api-fetch.ts";
export { createApiFetch } from "./api-client.ts";
export { proxyFromEnv } from "./proxy.ts";
export { systemResolver } from "./node-hop.ts";
export * from "./types.ts";
export {
  BodyTooLarge,
  EgressRefused,
  FetchTimeout,
  isPageFetchError,
  PageFetchError,
  TooManyRedirects,
  UpstreamNetworkError,
} from "../../core/net/fetch-errors.ts";
export { AllowListError, parseAllowList, type AllowList } from "../../core/net/allow-list.ts";
