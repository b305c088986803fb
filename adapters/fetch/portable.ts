/**
 * The page fetcher over a runtime's own fetch (Deno, Bun, or any standard fetch): the global fetch
 * with `redirect: "manual"`, and before every hop the name is resolved and every answer checked.
 * Same URL policy, redirects, deadline, body cap and typed errors as the Node fetcher
 * (page-loop.ts). What differs is WHEN the address is checked; deno-bun.md has the details:
 *
 * - Bun (pin "auto"): connects to the checked address itself: the URL's host is replaced by the
 *   address, with the `Host` header and, for https, `tls.serverName` set to the real name (Bun sends
 *   that SNI and verifies the certificate against it). As strong as Node: no second resolution.
 * - Deno (pin "auto"): http targets go through `Deno.createHttpClient({ proxy: { transport: "tcp" } })`
 *   to the checked address (Host header intact). Deno's fetch has no SNI override, so https targets
 *   are resolved, checked and then fetched by name: time-of-check/time-of-use gap (a rebinding DNS
 *   server could answer differently for the second lookup).
 * - Anywhere else (Node's global fetch without undici's Agent): resolve-then-check, the same gap.
 *
 * `createSafeFetch` (node:http) keeps the connect-time check on Deno and Bun as well and is the
 * stronger choice there; this one is for runtimes without node:http or that need their own fetch.
 * Literal-IP URLs are never at risk (checked as written, connected as written). The default
 * resolver is `node:dns` lookup (getaddrinfo, so /etc/hosts counts, as it does for the fetch),
 * which Deno and Bun both provide; `Deno.resolveDns` would skip /etc/hosts and see another answer.
 * Deno and Bun fetch also honour HTTP(S)_PROXY from the environment on their own.
 */
import { formatIp, parseIp } from "../../core/net/address-policy.ts";
import { EgressRefused, unreachableCode, UpstreamNetworkError } from "../../core/net/fetch-errors.ts";
import { checkResolved, unresolvable } from "../../core/net/url-policy.ts";
import { asFetchPort, loopSettings, raceAbort, readCapped, runPageFetch, type Hop, type HopResponse } from "./page-loop.ts";
import type { Resolver, SafeFetch, SafeFetchOptions } from "./types.ts";

export type PinMode = "bun" | "deno" | "none";

/** A fetch error's words that say the host could not be reached (no HTTP answer came). */
const UNREACHABLE_WORDS = /connection refused|connection reset|tcp connect error|dns error|failed to lookup|certificate|network is unreachable|no route to host/i;

/** Same public answer as a private target (core/net/url-policy.ts). */
function refusedUnresolved(host: string, detail: string): EgressRefused {
  const refusal = unresolvable(host, detail);
  return new EgressRefused(refusal.message, refusal.reason, refusal.internal);
}

export interface PortableOptions extends SafeFetchOptions {
  /** The fetch to wrap; default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** `auto` (default): connect to the checked address where the runtime allows; `off`: never. */
  pin?: "auto" | "off";
}

interface DenoLike {
  createHttpClient(options: {
    proxy?: { transport: "tcp"; hostname: string; port: number };
    caCerts?: string[];
  }): { close(): void };
}

export function detectPinMode(): PinMode {
  const g = globalThis as { Bun?: unknown; Deno?: { createHttpClient?: unknown } };
  if (g.Bun) return "bun";
  if (typeof g.Deno?.createHttpClient === "function") return "deno";
  return "none";
}

export const portableResolver: Resolver = async (hostname) => {
  const dns = await import("node:dns");
  return (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
};

function portOf(url: URL): number {
  return Number(url.port) || (url.protocol === "https:" ? 443 : 80);
}

/**
 * Per-runtime request changes: connect to `address` (when given) and nowhere else, and trust the
 * extra CAs. Returns the URL to fetch and how to release what was made for this request.
 */
function runtimeInit(
  mode: PinMode,
  url: URL,
  address: string | null,
  ca: string[] | undefined,
  init: Record<string, unknown>,
  headers: Headers,
): { url: URL; close(): void } {
  const https = url.protocol === "https:";
  if (mode === "bun") {
    const tls: Record<string, unknown> = {};
    let direct = url;
    if (address) {
      direct = new URL(url);
      direct.hostname = address.includes(":") ? `[${address}]` : address;
      headers.set("host", url.host);
      if (https) tls.serverName = url.hostname;
    }
    if (https && ca) tls.ca = ca;
    if (Object.keys(tls).length) init.tls = tls;
    return { url: direct, close: () => {} };
  }
  if (mode === "deno") {
    const options: Parameters<DenoLike["createHttpClient"]>[0] = {};
    if (address && !https) options.proxy = { transport: "tcp", hostname: address, port: portOf(url) };
    if (https && ca) options.caCerts = ca;
    if (!options.proxy && !options.caCerts) return { url, close: () => {} };
    const client = (globalThis as unknown as { Deno: DenoLike }).Deno.createHttpClient(options);
    init.client = client;
    return { url, close: () => client.close() };
  }
  return { url, close: () => {} };
}

/** A `FetchPort` (plus `fetchPage`) over the global fetch, checking addresses before each hop. */
export function createSafeFetchPortable(options: PortableOptions): SafeFetch {
  const settings = loopSettings(options, null);
  const resolver = options.resolver ?? portableResolver;
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const mode = detectPinMode();
  const pinning = options.pin !== "off" && mode !== "none";
  const ca = options.ca === undefined ? undefined : Array.isArray(options.ca) ? options.ca : [options.ca];

  const hop: Hop = async ({ target, method, headers: given, body, signal }) => {
    let addresses: string[] = [];
    if (!target.literal && !target.allowedByName) {
      try {
        addresses = (await raceAbort(resolver(target.hostname), signal)).map((a) => {
          const ip = parseIp(a);
          return ip ? formatIp(ip) : a;
        });
      } catch (err) {
        if (signal.aborted) throw err;
        throw refusedUnresolved(target.url.host, String(err));
      }
      if (addresses.length === 0) throw refusedUnresolved(target.url.host, "no addresses");
      const verdict = checkResolved(target.hostname, addresses, settings.allow);
      if (!verdict.ok) throw new EgressRefused(verdict.message, verdict.reason, verdict.internal);
    }
    // With pinning, try each checked address in order until one connects; without, one plain fetch.
    const candidates = pinning && !target.literal && !target.allowedByName ? addresses : [null];
    let lastError: unknown;
    for (const address of candidates) {
      const headers = new Headers(given);
      const init: Record<string, unknown> = { method, headers, body, redirect: "manual", signal };
      const pin = runtimeInit(mode, target.url, address, ca, init, headers);
      let res: Response;
      try {
        res = await doFetch(pin.url, init as RequestInit);
      } catch (err) {
        pin.close();
        if (signal.aborted) throw err;
        lastError = err;
        continue;
      }
      const close = () => pin.close();
      const hopResponse: HopResponse = {
        status: res.status,
        headers: res.headers,
        ...(address ? { remoteAddress: address } : {}),
        readBody: (maxBytes) => readCapped(res.body, target.url.href, maxBytes).finally(close),
        discard: () => {
          res.body?.cancel().catch(() => {});
          close();
        },
      };
      return hopResponse;
    }
    const cause = (lastError as { cause?: { code?: string; message?: string } })?.cause;
    const internal = `${cause?.code ?? ""} ${cause?.message ?? String(lastError)}`;
    // Runtimes say it differently: Node's fetch with an errno code, Deno and others in words.
    const unreachable = unreachableCode(cause?.code ?? "") || UNREACHABLE_WORDS.test(internal);
    throw new UpstreamNetworkError(`Could not fetch from ${target.url.host}.`, internal, { cause: lastError, unreachable });
  };

  return asFetchPort((url, request = {}) => {
    // The operator's proxies (QUARRY_PROXIES) need the Node fetcher's sockets: said, never silently read direct.
    if (request.proxy) return Promise.reject(new UpstreamNetworkError("This page fetcher cannot use proxies (QUARRY_PROXIES needs the node:http page fetcher).", undefined, { proxySide: true }));
    return runPageFetch(url, request, settings, hop);
  });
}
