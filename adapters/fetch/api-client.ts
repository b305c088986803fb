/**
 * The ofetch client behind the upstream transport (api-fetch.ts): retries off, a per-request
 * timeout when the caller gives no signal, the honest User-Agent where a backend sets none.
 * Kept apart so that ofetch loads with the first upstream request, not at start-up.
 */
import { createFetch, type $Fetch } from "ofetch";
import type { ApiFetchOptions } from "./api-fetch.ts";
import { DEFAULT_TIMEOUT_MS, quarryUserAgent } from "./types.ts";

export function createApiFetch(options: ApiFetchOptions = {}): $Fetch {
  const base = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return createFetch({
    fetch: base as typeof globalThis.fetch,
    defaults: {
      retry: 0,
      timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      headers: {
        "user-agent": options.userAgent ?? quarryUserAgent(),
        ...(options.accept === null ? {} : { accept: options.accept ?? "application/json" }),
      },
    },
  });
}
