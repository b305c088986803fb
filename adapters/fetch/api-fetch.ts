/**
 * The upstream-API client: ofetch with retries OFF (the backend runner owns retries, suspension
 * and the shared deadline), a per-request timeout when the caller gives no signal, and the honest
 * User-Agent where a backend sets none. `createApiFetchPort` is the upstream transport
 * (`Ports.fetch`) that adapters/shared/bootstrap.ts hands the core. Backend base URLs come from
 * the operator (QUARRY_<BACKEND>_URL, often a local SearXNG), so this client has no SSRF guard:
 * the core's egress policy (core/net/egress.ts) sends it only requests on a configured upstream's
 * own origin, with redirects handled by hand; everything else goes through the guarded page fetcher.
 */
import type { $Fetch } from "ofetch";
import type { FetchPort } from "../../core/ports.ts";

export interface ApiFetchOptions {
  timeoutMs?: number;
  userAgent?: string;
  /** The fetch underneath; default the runtime's global fetch. */
  fetch?: FetchPort;
  /** Accept sent when a request has none; `null` sends none (default `application/json`). */
  accept?: string | null;
}

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * The same client as a `FetchPort` (raw Responses, no JSON parsing, no throwing on 4xx/5xx). The
 * client (and ofetch with it) is loaded on the first request: start-up does not wait for it.
 */
export function createApiFetchPort(options: ApiFetchOptions = {}): FetchPort {
  let client: Promise<$Fetch> | null = null;
  return async (input, init) => {
    client ??= import("./api-client.ts").then((m) => m.createApiFetch(options));
    const res = await (await client).raw(input instanceof URL ? input.href : input, {
      ...(init as object),
      responseType: "stream",
      ignoreResponseError: true,
    });
    return new Response(NULL_BODY.has(res.status) ? null : res.body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
