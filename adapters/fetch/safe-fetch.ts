/**
 * The guarded page fetcher for Node: every page fetch in Quarry (scrape, search tiers, research)
 * goes through it, because the URLs come from callers and from the web.
 *
 * Guarantees (api.md §4 `url_not_allowed`; the policy is `core/net/`):
 * - http and https only; no credentials in URLs; literal IP hosts in any spelling must be public.
 * - Connect-time address check: the socket's `lookup` resolves the name and refuses unless every
 *   answer is public or inside QUARRY_EGRESS_ALLOW; the socket then connects only to those checked
 *   addresses. Nothing is sent to a refused address, and DNS rebinding between a check and the
 *   connect is impossible because there is no separate check.
 * - Redirects are followed by hand (at most 5), each target checked again from scratch.
 * - One deadline for the whole fetch (redirects and body included), via AbortSignal.
 * - The body is decoded (gzip, deflate, br) as a stream and capped AFTER decoding (10 MiB), so a
 *   compression bomb is cut off after the cap; the honest QuarryBot User-Agent is always sent.
 *
 * Runtimes: Deno's and Bun's node:http call `lookup` and connect to its answer too, so this
 * fetcher keeps the connect-time guarantee there (tests/fetch/runtimes.test.ts checks it on each);
 * deno-bun.md compares it with the portable fetcher.
 *
 * Why node:http and not ofetch here: ofetch (like the global fetch it wraps) cannot hook the
 * connect step, and Node 20's fetch can only do so through an undici `Agent` with
 * `connect.lookup`, from the `undici` package, which is not a dependency. ofetch serves the JSON
 * API side (`createApiFetch`), and can wrap this port for page fetches that want its conveniences:
 * `ofetch.create({}, { fetch: createSafeFetch(opts) })`.
 *
 * Proxies (HTTP_PROXY/HTTPS_PROXY/NO_PROXY via `proxyFromEnv`): http targets are forwarded in
 * absolute form, https targets tunnelled with CONNECT and TLS end-to-end. The proxy resolves the
 * target itself, so the connect-time check cannot apply: the target is resolved and checked before
 * anything is sent (refused → the proxy never hears of it), a weaker guarantee, since the proxy's
 * DNS answer may differ. Operators who need the strong one should not route page fetches through a
 * proxy, or give the proxy its own egress rules.
 */
import { rootCertificates } from "node:tls";
import { NODE_ACCEPT_ENCODING } from "./node-body.ts";
import { nodeHop, systemResolver } from "./node-hop.ts";
import { asFetchPort, loopSettings, runPageFetch } from "./page-loop.ts";
import { proxySelector, resolveProxy } from "./proxy.ts";
import { UpstreamNetworkError } from "../../core/net/fetch-errors.ts";
import type { ProxyEntry, ProxyPool } from "../../core/net/proxy-pool.ts";
import type { PageRequestOptions, PageResponse, SafeFetch, SafeFetchOptions } from "./types.ts";

/** Proxies tried for one read before it fails: a dead one is paused and the next taken. */
const PROXY_TRIES = 3;

/** A `FetchPort` (plus `fetchPage`) for Node with the connect-time SSRF guard. */
export function createSafeFetch(options: SafeFetchOptions): SafeFetch {
  const settings = loopSettings(options, NODE_ACCEPT_ENCODING);
  const extraCa = options.ca === undefined ? undefined : Array.isArray(options.ca) ? options.ca : [options.ca];
  const deps = {
    allow: settings.allow,
    resolver: options.resolver ?? systemResolver,
    ca: extraCa ? [...rootCertificates, ...extraCa] : undefined,
  };
  const hop = nodeHop({ ...deps, proxyFor: proxySelector(options.proxy) });
  const pool = options.proxies;
  const hops = new Map<string, ReturnType<typeof nodeHop>>();
  const hopVia = (entry: ProxyEntry) => {
    let h = hops.get(entry.id);
    if (!h) {
      const resolved = { ...resolveProxy(entry.url), tunnelAll: true };
      hops.set(entry.id, (h = nodeHop({ ...deps, proxyFor: () => resolved })));
    }
    return h;
  };
  return asFetchPort((url, request = {}) => (request.proxy ? viaPool(pool, url, request, (entry) => runPageFetch(url, request, settings, hopVia(entry))) : runPageFetch(url, request, settings, hop)));
}

/**
 * A read through the operator's proxies (QUARRY_PROXIES): the pool's next proxy for the host; one
 * that fails itself (unreachable, refusing us) is paused and the next one tried, up to PROXY_TRIES.
 * Failures of the site behind the proxy are the read's, as they would be directly.
 */
async function viaPool(pool: ProxyPool | undefined, url: string | URL, request: PageRequestOptions, read: (entry: ProxyEntry) => Promise<PageResponse>): Promise<PageResponse> {
  const ask = request.proxy!;
  const host = new URL(String(url)).host;
  const named = `${ask.pool ? ` in pool "${ask.pool}"` : ""}${ask.country ? ` for country ${ask.country}` : ""}`;
  if (!pool || pool.candidates(ask).length === 0) throw new UpstreamNetworkError(`No proxy${named} is configured (QUARRY_PROXIES).`, undefined, { proxySide: true });
  const tried = new Set<string>();
  let last: unknown = null;
  for (let i = 0; i < PROXY_TRIES; i++) {
    const { entry } = pool.pick(host, ask, tried);
    if (!entry) break;
    tried.add(entry.id);
    try {
      const page = await read(entry);
      pool.succeeded(entry);
      return { ...page, via: entry.label };
    } catch (err) {
      if (!(err instanceof UpstreamNetworkError)) throw err;
      if (err.proxySide) pool.failed(entry);
      // A tunnel cut mid-read (the proxy died under it) is tried again through the next proxy, which pauses this one if it is gone.
      else if (!/^(ECONNRESET|EPIPE)\b/.test(err.internal)) throw err;
      last = err;
    }
  }
  throw new UpstreamNetworkError(
    last ? `Every proxy tried${named} failed; they are paused (see /health).` : `Every proxy${named} is paused after failing (see /health).`,
    last instanceof Error ? (last as UpstreamNetworkError).internal : undefined,
    { proxySide: true },
  );
}

/** One guarded page fetch (builds the fetcher each call; keep a `createSafeFetch` for many). */
export function fetchPage(url: string | URL, options: SafeFetchOptions & PageRequestOptions): Promise<PageResponse> {
  return createSafeFetch(options).fetchPage(url, options);
}
