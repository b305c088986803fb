/**
 * One policy for every outbound request the core makes (issue: URLs that upstreams hand back).
 *
 * - A request to a configured upstream's own origin (`QUARRY_<ID>_URL`, the LLM, the YouTube Data
 *   API) goes out as configured, even to a private address: the operator chose it. Its redirects
 *   are followed only within that origin; one that leaves it is treated like any other URL.
 * - Every other URL — a caption track, a reply thread, a continuation page taken from an answer,
 *   a redirect target — goes through the guarded page fetcher: the connect-time address check on
 *   every hop, so no upstream can point Quarry at a private or metadata address.
 *
 * The services build the one `FetchPort` every backend, runner and operation receives from this;
 * nothing in the core calls the raw network port directly (tests/unit/egress-policy.test.ts).
 */
import type { FetchPort, PagePort } from "../ports.ts";

/** A base URL's origin as a test; `{lang}` in a host (Wikipedia) matches one DNS label. */
export function originMatcher(baseUrl: string): (origin: string) => boolean {
  const sample = new URL(baseUrl.replaceAll("{lang}", "lang-placeholder"));
  if (!baseUrl.includes("{lang}")) return (origin) => origin === sample.origin;
  const pattern = sample.origin.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace("lang-placeholder", "[a-z0-9-]{1,63}");
  const re = new RegExp(`^${pattern}$`, "i");
  return (origin) => re.test(origin);
}

/** A guarded page fetch shaped like `fetch`, for URLs that are not a configured upstream's. */
export function guardedFetch(pages: PagePort): FetchPort {
  return async (input, init) => {
    const req = input instanceof Request ? input : new Request(input, init);
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : new Uint8Array(await req.arrayBuffer());
    const page = await pages.fetchPage(req.url, {
      method: req.method,
      headers: req.headers,
      ...(body ? { body } : {}),
      ...(init?.signal ?? req.signal ? { signal: (init?.signal ?? req.signal) as AbortSignal } : {}),
    });
    return new Response(page.status === 204 || page.status === 304 ? null : (page.body as Uint8Array<ArrayBuffer>), { status: page.status, headers: page.headers });
  };
}

const MAX_REDIRECTS = 5;

export interface EgressOptions {
  /** The runtime's network, used only for configured upstreams. */
  raw: FetchPort;
  /** Everything else. */
  guarded: FetchPort;
  /** Base URLs of the configured upstreams. */
  upstreams: readonly string[];
}

export function createEgress(options: EgressOptions): FetchPort {
  const matchers = options.upstreams.filter((u) => URL.canParse(u.replaceAll("{lang}", "x"))).map(originMatcher);
  const configured = (url: URL) => matchers.some((m) => m(url.origin));
  const egress: FetchPort = async (input, init) => {
    const first = input instanceof Request ? input : new Request(input, init);
    const signal = init?.signal ?? first.signal;
    if (!configured(new URL(first.url))) return options.guarded(first, { signal });
    let url = new URL(first.url);
    let method = first.method;
    let body = first.body ? await first.arrayBuffer() : undefined;
    for (let hop = 0; ; hop++) {
      const res = await options.raw(new Request(url, { method, headers: first.headers, body, signal }), { redirect: "manual", signal });
      const location = res.status >= 300 && res.status < 400 ? res.headers.get("location") : null;
      if (!location) return res;
      await res.body?.cancel().catch(() => {});
      if (hop >= MAX_REDIRECTS) throw new TypeError(`${url.origin} redirected more than ${MAX_REDIRECTS} times`);
      url = new URL(location, url);
      if (res.status !== 307 && res.status !== 308) {
        method = method === "HEAD" ? "HEAD" : "GET";
        body = undefined;
      }
      // Leaving the configured origin: the target is just another URL, so it passes the guard.
      if (!configured(url)) return options.guarded(new Request(url, { method, headers: first.headers, body, signal }), { signal });
    }
  };
  return egress;
}
