/**
 * HTTP_PROXY / HTTPS_PROXY / NO_PROXY, for the Node page fetcher. Only `http://` proxies are
 * supported (an `https://` proxy URL is refused at start-up, never silently ignored). Through a
 * proxy the connect-time address check cannot see where the proxy connects, so the fetcher
 * resolves and checks the target before sending (see safe-fetch.ts, "Proxies").
 */
import { parseProxyEnv, type Env } from "../../core/config.ts";
import type { ProxyConfig } from "./types.ts";

/** The proxy settings the environment asks for (lowercase names win, as curl does). */
export function proxyFromEnv(env: Env): ProxyConfig | undefined {
  return parseProxyEnv(env) ?? undefined;
}

export interface ResolvedProxy {
  url: URL;
  /** `Basic …` when the proxy URL carries credentials. */
  authorization: string | null;
  /** `http:` (the env's HTTP(S)_PROXY and QUARRY_PROXIES), `https:` or `socks5:` (QUARRY_PROXIES only). */
  protocol: "http:" | "https:" | "socks5:";
  /** Tunnel http targets too (CONNECT to the checked address) rather than forward them by name: QUARRY_PROXIES entries. */
  tunnelAll?: boolean;
}

/** A QUARRY_PROXIES entry's URL (core/net/proxy-pool.ts checked its scheme) as the hop uses it. */
export function resolveProxy(text: string): ResolvedProxy {
  const url = new URL(text);
  const authorization =
    url.username || url.password
      ? `Basic ${btoa(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`)}`
      : null;
  const protocol = url.protocol === "https:" ? "https:" : url.protocol.startsWith("socks") ? "socks5:" : "http:";
  return { url, authorization, protocol };
}

function parseProxy(text: string): ResolvedProxy {
  const url = new URL(text.includes("://") ? text : `http://${text}`);
  if (url.protocol !== "http:") throw new Error(`proxy ${url.protocol}// is not supported; use an http:// proxy URL`);
  return resolveProxy(url.href);
}

function bypassed(target: URL, noProxy: string | undefined): boolean {
  if (!noProxy) return false;
  const host = target.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return noProxy
    .split(",")
    .map((e) => e.trim().toLowerCase().replace(/:\d+$/, ""))
    .filter(Boolean)
    .some((entry) => {
      if (entry === "*") return true;
      const suffix = entry.replace(/^\*?\./, "");
      return host === suffix || host.endsWith(`.${suffix}`);
    });
}

/** Picks the proxy for one target URL; `null` means connect directly. Validates eagerly. */
export function proxySelector(proxy: string | ProxyConfig | undefined): (target: URL) => ResolvedProxy | null {
  if (!proxy) return () => null;
  const config: ProxyConfig = typeof proxy === "string" ? { http: proxy, https: proxy } : proxy;
  const http = config.http ? parseProxy(config.http) : null;
  const https = config.https ? parseProxy(config.https) : null;
  return (target) => {
    if (bypassed(target, config.noProxy)) return null;
    return target.protocol === "https:" ? https : http;
  };
}
