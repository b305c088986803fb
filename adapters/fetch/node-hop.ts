/**
 * One request over node:http/https with the address check at connect time: the socket's `lookup`
 * resolves the name, refuses unless EVERY answer is public (or allowed), and only then hands the
 * addresses to the socket, so the address connected to is exactly one that was checked: a DNS
 * answer that changes between a check and the connect (rebinding) cannot get through. Node skips
 * `lookup` for literal IPs; those were checked by `checkUrl` before the hop.
 */
import type { LookupAddress, LookupOptions } from "node:dns";
import { promises as dns } from "node:dns";
import * as http from "node:http";
import * as https from "node:https";
import * as net from "node:net";
import { isIPv6 } from "node:net";
import type { Duplex } from "node:stream";
import * as tls from "node:tls";
import { formatIp, parseIp } from "../../core/net/address-policy.ts";
import type { AllowList } from "../../core/net/allow-list.ts";
import { EgressRefused, unreachableCode, UpstreamNetworkError } from "../../core/net/fetch-errors.ts";
import { checkResolved, unresolvable } from "../../core/net/url-policy.ts";
import { readNodeBody } from "./node-body.ts";
import { raceAbort, type Hop, type HopRequest, type HopResponse } from "./page-loop.ts";
import type { ResolvedProxy } from "./proxy.ts";
import type { Resolver } from "./types.ts";

export const systemResolver: Resolver = async (hostname) =>
  (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export interface NodeHopDeps {
  allow: AllowList;
  resolver: Resolver;
  /** Extra CA certificates, added to Node's bundled roots. */
  ca?: string[];
  proxyFor: (target: URL) => ResolvedProxy | null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function notFound(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname });
}

function headersFromRaw(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i], raw[i + 1]);
    } catch {
      // a header value Headers rejects is dropped, not fatal
    }
  }
  return headers;
}

function nodeHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries(headers.entries());
}

/**
 * A connection failure as a public message naming only the host the caller wrote. `targetSide`:
 * the failure is the target's (a direct connection, or the request inside a proxy's tunnel), so
 * one that says the host cannot be reached is marked `unreachable`; reaching the proxy itself
 * failing says nothing about the site.
 */
export function networkError(err: unknown, host: string, via = "", targetSide = !via): unknown {
  const e = err as NodeJS.ErrnoException;
  if (e?.name === "AbortError" || err instanceof EgressRefused) return err;
  const code = e?.code ?? "";
  const internal = `${code} ${e?.message ?? String(err)}`.trim();
  const unreachable = targetSide && unreachableCode(code);
  // Reaching the proxy failed (not the site behind it): the proxy is paused and another one tried.
  const proxySide = !!via && !targetSide;
  const say = (msg: string) => new UpstreamNetworkError(msg + via, internal, { cause: err, unreachable, proxySide });
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NODATA") {
    // A target that does not resolve answers like a private one, so callers cannot probe
    // internal names; a proxy that does not resolve is the operator's problem and says so.
    if (!via) {
      const refusal = unresolvable(host, internal);
      return new EgressRefused(refusal.message, refusal.reason, refusal.internal);
    }
    return say(`Could not resolve ${host}.`);
  }
  if (code === "ECONNREFUSED") return say(`${host} refused the connection.`);
  if (code === "ECONNRESET" || code === "EPIPE") return say(`The connection to ${host} was reset.`);
  if (code === "ETIMEDOUT" || code === "ENETUNREACH" || code === "EHOSTUNREACH") return say(`${host} could not be reached.`);
  if (code.startsWith("HPE_")) return say(`${host} sent an invalid HTTP response.`);
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return say(`${host}'s TLS certificate was not accepted.`);
  return say(`Could not fetch from ${host}.`);
}

function wrap(res: http.IncomingMessage, req: http.ClientRequest, url: URL, direct: boolean): HopResponse {
  return {
    status: res.statusCode ?? 0,
    headers: headersFromRaw(res.rawHeaders),
    ...(direct && res.socket?.remoteAddress ? { remoteAddress: res.socket.remoteAddress } : {}),
    readBody: (maxBytes, signal) => readNodeBody(res, url.href, maxBytes, signal),
    discard: () => {
      res.destroy();
      req.destroy();
    },
  };
}

function targetPort(url: URL): number {
  return Number(url.port) || (url.protocol === "https:" ? 443 : 80);
}

/** Connects directly; the guarded lookup decides which addresses the socket may use. */
function direct(req: HopRequest, deps: NodeHopDeps): Promise<HopResponse> {
  const { target } = req;
  return new Promise((resolve, reject) => {
    let refused: EgressRefused | null = null;
    const lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
      deps.resolver(hostname).then(
        (answers) => {
          // Canonical spellings only reach the socket (a resolver may hand back "0x7f.1").
          const addresses = answers.map((a) => parseIp(a)).map((ip, i) => (ip ? formatIp(ip) : answers[i]));
          const verdict = target.allowedByName ? { ok: true as const } : checkResolved(hostname, addresses, deps.allow);
          if (!verdict.ok) {
            refused = new EgressRefused(verdict.message, verdict.reason, verdict.internal);
            callback(refused as unknown as NodeJS.ErrnoException, "");
            return;
          }
          const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : options.family;
          const entries = addresses
            .map((address) => ({ address, family: isIPv6(address) ? 6 : 4 }))
            .filter((e) => !family || e.family === family);
          if (entries.length === 0) callback(notFound(hostname), "");
          else if (options.all) callback(null, entries);
          else callback(null, entries[0].address, entries[0].family);
        },
        (err: NodeJS.ErrnoException) => callback(err, ""),
      );
    };
    const isHttps = target.url.protocol === "https:";
    const r = (isHttps ? https : http).request(
      {
        host: target.hostname,
        port: targetPort(target.url),
        path: target.url.pathname + target.url.search,
        method: req.method,
        headers: nodeHeaders(req.headers),
        lookup,
        signal: req.signal,
        agent: false,
        ...(isHttps && deps.ca ? { ca: deps.ca } : {}),
      },
      (res) => resolve(wrap(res, r, target.url, true)),
    );
    r.on("error", (err) => reject(refused ?? networkError(err, target.url.host)));
    r.end(req.body);
  });
}

/**
 * Through a proxy the proxy resolves and connects, out of our sight: resolve and check here first
 * (fail closed when we cannot resolve). Weaker than `direct`: the proxy may get another answer.
 */
async function precheck(req: HopRequest, deps: NodeHopDeps): Promise<string | null> {
  const { target } = req;
  if (target.literal || target.allowedByName) return null;
  let addresses: string[];
  try {
    addresses = await raceAbort(deps.resolver(target.hostname), req.signal);
  } catch (err) {
    throw networkError(err, target.url.host);
  }
  if (addresses.length === 0) throw networkError(notFound(target.hostname), target.url.host);
  const canonical = addresses.map((a) => parseIp(a)).map((ip, i) => (ip ? formatIp(ip) : addresses[i]!));
  const verdict = checkResolved(target.hostname, canonical, deps.allow);
  if (!verdict.ok) throw new EgressRefused(verdict.message, verdict.reason, verdict.internal);
  return canonical[0]!;
}

/** The proxy's own host and port, and the module that speaks to it (TLS to an `https://` proxy). */
function proxyLeg(proxy: ResolvedProxy): { host: string; port: number; mod: typeof http | typeof https } {
  const tls = proxy.protocol === "https:";
  return { host: proxy.url.hostname.replace(/^\[|\]$/g, ""), port: Number(proxy.url.port) || (tls ? 443 : 80), mod: tls ? https : http };
}

function forward(req: HopRequest, proxy: ResolvedProxy): Promise<HopResponse> {
  const { url } = req.target;
  const leg = proxyLeg(proxy);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...nodeHeaders(req.headers), host: url.host };
    if (proxy.authorization) headers["proxy-authorization"] = proxy.authorization;
    const r = leg.mod.request(
      {
        host: leg.host,
        port: leg.port,
        path: url.origin + url.pathname + url.search,
        method: req.method,
        headers,
        signal: req.signal,
        agent: false,
      },
      (res) => resolve(wrap(res, r, url, false)),
    );
    r.on("error", (err) => reject(networkError(err, url.host, " (through the proxy)")));
    r.end(req.body);
  });
}

/**
 * The request itself over a socket that already reaches the target (a CONNECT tunnel, a SOCKS
 * connection): TLS end to end for https, plain HTTP otherwise.
 */
function overSocket(req: HopRequest, deps: NodeHopDeps, socket: Duplex): Promise<HopResponse> {
  const { target, signal } = req;
  const isHttps = target.url.protocol === "https:";
  const servername = target.literal ? undefined : target.hostname;
  return new Promise((resolve, reject) => {
    const r = (isHttps ? https : http).request(
      {
        host: target.hostname,
        port: targetPort(target.url),
        path: target.url.pathname + target.url.search,
        method: req.method,
        headers: { ...nodeHeaders(req.headers), host: target.url.host },
        signal,
        createConnection: () =>
          isHttps
            ? tls.connect({ socket, host: target.hostname, servername, ALPNProtocols: ["http/1.1"], ...(deps.ca ? { ca: deps.ca } : {}) })
            : (socket as net.Socket),
      },
      (response) => resolve(wrap(response, r, target.url, false)),
    );
    r.on("error", (err) => {
      socket.destroy();
      reject(networkError(err, target.url.host, " (through the proxy)", true));
    });
    r.end(req.body);
  });
}

/** `host:port` as CONNECT and SOCKS name it: the checked address when there is one, so the proxy connects exactly there. */
function authorityOf(target: HopRequest["target"], checked: string | null): { host: string; port: number; text: string } {
  const host = checked ?? target.hostname;
  const port = targetPort(target.url);
  return { host, port, text: `${isIPv6(host) ? `[${host}]` : host}:${port}` };
}

function tunnel(req: HopRequest, proxy: ResolvedProxy, deps: NodeHopDeps, checked: string | null): Promise<HopResponse> {
  const { target, signal } = req;
  const authority = authorityOf(target, checked).text;
  const leg = proxyLeg(proxy);
  return new Promise<Duplex>((resolve, reject) => {
    const connectHeaders: Record<string, string> = { host: authority };
    if (proxy.authorization) connectHeaders["proxy-authorization"] = proxy.authorization;
    const connectReq = leg.mod.request({
      host: leg.host,
      port: leg.port,
      method: "CONNECT",
      path: authority,
      headers: connectHeaders,
      agent: false,
    });
    const onAbort = () => connectReq.destroy(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    connectReq.on("error", (err) => {
      signal.removeEventListener("abort", onAbort);
      reject(networkError(err, target.url.host, " (through the proxy)"));
    });
    connectReq.on("connect", (res, socket, head) => {
      signal.removeEventListener("abort", onAbort);
      if (res.statusCode !== 200) {
        socket.destroy();
        // 502 and 504: the proxy could not reach the host; 403 or 407 is the proxy's own policy (the proxy's failure).
        const unreachable = res.statusCode === 502 || res.statusCode === 504;
        reject(new UpstreamNetworkError(`The proxy refused to connect to ${target.url.host} (HTTP ${res.statusCode}).`, undefined, { unreachable, proxySide: !unreachable }));
        return;
      }
      if (head.length) socket.unshift(head);
      resolve(socket);
    });
    connectReq.end();
  }).then((socket) => overSocket(req, deps, socket));
}

/** SOCKS5 (RFC 1928, with RFC 1929 user and password), through the `socks` package. */
async function socks(req: HopRequest, proxy: ResolvedProxy, deps: NodeHopDeps, checked: string | null): Promise<HopResponse> {
  const { target, signal } = req;
  const dest = authorityOf(target, checked);
  const { SocksClient } = await import("socks");
  const connecting = SocksClient.createConnection({
    proxy: {
      host: proxy.url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(proxy.url.port),
      type: 5,
      ...(proxy.url.username ? { userId: decodeURIComponent(proxy.url.username), password: decodeURIComponent(proxy.url.password) } : {}),
    },
    command: "connect",
    destination: { host: dest.host, port: dest.port },
  });
  let socket: net.Socket;
  try {
    socket = (await raceAbort(connecting, signal)).socket;
  } catch (err) {
    connecting.then((c) => c.socket.destroy(), () => {});
    if (signal.aborted) throw err;
    // The proxy answered that the target cannot be reached: the site's failure; anything else is the proxy's.
    const targetSide = /rejected connection - (HostUnreachable|ConnectionRefused|NetworkUnreachable|TTLExpired)/i.test((err as Error)?.message ?? "");
    throw networkError(Object.assign(err as Error, { code: (err as NodeJS.ErrnoException).code ?? (targetSide ? "EHOSTUNREACH" : "") }), target.url.host, " (through the proxy)", targetSide);
  }
  return overSocket(req, deps, socket);
}

/** The Node hop: direct with the connect-time check, or through the configured proxy. */
export function nodeHop(deps: NodeHopDeps): Hop {
  return async (req) => {
    const proxy = deps.proxyFor(req.target.url);
    if (!proxy) return direct(req, deps);
    // The egress guard decides on the target, whatever the proxy would reach: refused here, the proxy never hears of it.
    const checked = await precheck(req, deps);
    if (proxy.protocol === "socks5:") return socks(req, proxy, deps, checked);
    return req.target.url.protocol === "https:" || proxy.tunnelAll ? tunnel(req, proxy, deps, checked) : forward(req, proxy);
  };
}
