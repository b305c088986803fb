/** Options and results shared by the Node and the portable (Deno/Bun) page fetchers. */
import type { AllowList } from "../../core/net/allow-list.ts";
import type { ProxyPool } from "../../core/net/proxy-pool.ts";
import type { FetchedPage, FetchPort, ProxyChoice } from "../../core/ports.ts";

/** Resolves a hostname to every address it has (IPv4 and IPv6, as text). */
export type Resolver = (hostname: string) => Promise<string[]>;

export const DEFAULT_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
export const DEFAULT_MAX_REDIRECTS = 5;

/** The honest User-Agent: who fetches, and where to read about it. */
export function quarryUserAgent(version = "0.1.0"): string {
  return `QuarryBot/${version} (+https://github.com/quarry/quarry; self-hosted search API)`;
}

export interface ProxyConfig {
  /** Proxy for http: targets (HTTP_PROXY). Only `http://` proxy URLs are supported. */
  http?: string;
  /** Proxy for https: targets, tunnelled with CONNECT (HTTPS_PROXY). */
  https?: string;
  /** NO_PROXY: comma-separated hosts/suffixes that bypass the proxy; `*` = all. */
  noProxy?: string;
}

export interface SafeFetchOptions {
  /** QUARRY_EGRESS_ALLOW, parsed with `parseAllowList`. */
  allow: AllowList;
  /** Replaces DNS (tests map names to loopback); default: the system resolver (getaddrinfo). */
  resolver?: Resolver;
  /** Whole fetch, redirects and body included. Default 15 s. */
  timeoutMs?: number;
  /** Body cap counted after decompression. Default 10 MiB. */
  maxBytes?: number;
  /** Redirects followed (each one re-checked). Default 5. */
  maxRedirects?: number;
  userAgent?: string;
  /** One proxy URL for both schemes, or per scheme. See `proxyFromEnv`. */
  proxy?: string | ProxyConfig;
  /** QUARRY_PROXIES: reads that ask for a proxy (`proxy` option) go through the pool's next one. */
  proxies?: ProxyPool;
  /** Extra trusted CA certificates (PEM), for intranet sites. Node fetcher; portable on Bun and Deno only. */
  ca?: string | string[];
}

export interface PageRequestOptions {
  method?: string;
  headers?: HeadersInit;
  body?: Uint8Array | string;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxBytes?: number;
  /** `follow` (default), `manual` (return the 3xx as is) or `error`. */
  redirect?: RequestRedirect;
  /** Through the operator's proxies (`options.proxies`): any, a pool's, a country's. */
  proxy?: ProxyChoice;
}

/** What a guarded page fetch returns: the core's `FetchedPage`, plus the peer address when known. */
export interface PageResponse extends FetchedPage {
  /** The peer address the final response came from, when the runtime tells (not through a proxy). */
  remoteAddress?: string;
}

/** A `FetchPort` whose every call is guarded, plus the richer page API. */
export interface SafeFetch extends FetchPort {
  fetchPage(url: string | URL, options?: PageRequestOptions): Promise<PageResponse>;
}
