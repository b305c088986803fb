/**
 * The JSON/API client for backends (SearXNG, Brave, Wikipedia, …): ofetch with retries OFF (the
 * backend runner owns retries, suspension and the shared deadline), a per-request timeout and the
 * honest User-Agent. Backend base URLs come from the operator (QUARRY_<BACKEND>_URL, often a
 * local SearXNG), so this client has no SSRF guard; page URLs never go through it. To use ofetch's
 * conveniences on page fetches, give it the guarded port:
 * `createApiFetch({ fetch: createSafeFetch(options) })`.
 */
import { createFetch, type $Fetch } from "ofetch";
import type { FetchPort } from "../../core/ports.ts";
import { DEFAULT_TIMEOUT_MS, quarryUserAgent } from "./types.ts";

export interface ApiFetchOptions {
  timeoutMs?: number;
  userAgent?: string;
  /** The fetch underneath; default the runtime's global fetch. */
  fetch?: FetchPort;
}

export function createApiFetch(options: ApiFetchOptions = {}): $Fetch {
  const base = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return createFetch({
    fetch: base as typeof globalThis.fetch,
    defaults: {
      retry: 0,
      timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      headers: { "user-agent": options.userAgent ?? quarryUserAgent(), accept: "application/json" },
    },
  });
}

/** The same client as a `FetchPort` (raw Responses, no JSON parsing, no throwing on 4xx/5xx). */
export function createApiFetchPort(options: ApiFetchOptions = {}): FetchPort {
  const client = createApiFetch(options);
  return async (input, init) => {
    const res = await client.raw(input instanceof URL ? input.href : input, {
      ...(init as object),
      responseType: "stream",
      ignoreResponseError: true,
    });
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
