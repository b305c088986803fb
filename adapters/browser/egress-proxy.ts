/**
 * The browser's only way out: a forward proxy on 127.0.0.1 that applies the same egress policy as
 * the page fetcher (core/net/url-policy.ts) to every connection Chromium opens — documents,
 * redirects, subresources, XHR/fetch, WebSockets, workers and iframes alike. Chromium resolves
 * nothing itself through a proxy: the proxy resolves each name, checks every answer, and connects
 * only to an address it checked (no rebinding window), exactly as the page fetcher's connect-time
 * lookup does. HTTPS and WebSockets arrive as CONNECT tunnels, plain HTTP in absolute form.
 *
 * The proxy's own answers to plain HTTP say why in `x-quarry-egress` (a site's header of that
 * name is dropped): `refused` (the policy), `unresolvable` (the name has no address) and
 * `unreachable` (the host gave no answer: refused, reset, timed out; its 502), so the render path
 * fails such a page as the page fetcher would, not as a page that answered 403 or 502.
 *
 * Nothing outlives the browser's interest in it: when the browser's side of a request or tunnel
 * closes (a render ended, its context closed), the host's side is closed too, and a host socket
 * silent for `idleMs` is closed by itself (an answer that never starts: 504, marked unreachable).
 * A host that accepts connections and never answers once left every one of them open, until the
 * process ran out of file descriptors and every account's requests failed.
 */
import * as http from "node:http";
import * as net from "node:net";
import { formatIp, parseIp } from "../../core/net/address-policy.ts";
import type { AllowList } from "../../core/net/allow-list.ts";
import { unreachableCode } from "../../core/net/fetch-errors.ts";
import { checkResolved, checkUrl } from "../../core/net/url-policy.ts";
import type { Resolver } from "../fetch/types.ts";

export interface EgressProxy {
  /** `http://127.0.0.1:<port>`, for Chromium's --proxy-server. */
  url: string;
  /** Connections refused so far (host:port and why, for the log and tests). */
  refused: string[];
  /** Sockets open now: the browser's to the proxy, and the proxy's to hosts (for /metrics). */
  sockets(): { client: number; upstream: number };
  close(): Promise<void>;
}

/**
 * Longest a socket to a host may stay silent (nothing sent or received), ms: the longest render
 * deadline (timeout_ms is at most 60 s), so it never cuts a render short, only ends what no render
 * waits for any more.
 */
export const UPSTREAM_IDLE_MS = 60_000;
/** How long a plain-http socket to a host is kept for the page's next request to it, ms. */
const FREE_SOCKET_MS = 5_000;

/** `unresolvable`: the name had no address (or its lookup failed), as opposed to a refused one. */
type Verdict = { ok: true; address: string } | { ok: false; why: string; unresolvable?: true };

/** Resolves and checks `host`; the address to connect to, or why not. */
export async function checkTarget(host: string, port: number, allow: AllowList, resolver: Resolver): Promise<Verdict> {
  const bare = host.replace(/^\[|\]$/g, "");
  const url = `http://${bare.includes(":") ? `[${bare}]` : bare}:${port}/`;
  const verdict = checkUrl(url, allow);
  if (!verdict.ok) return { ok: false, why: verdict.internal };
  if (verdict.literal) return { ok: true, address: formatIp(verdict.literal) };
  let answers: string[];
  try {
    answers = (await resolver(verdict.hostname)).map((a) => {
      const ip = parseIp(a);
      return ip ? formatIp(ip) : a;
    });
  } catch (err) {
    return { ok: false, why: `could not resolve ${verdict.hostname}: ${(err as Error).message}`, unresolvable: true };
  }
  if (!answers.length) return { ok: false, why: `${verdict.hostname} has no address`, unresolvable: true };
  const resolved = checkResolved(verdict.hostname, answers, allow);
  if (!resolved.ok) return { ok: false, why: resolved.internal };
  return { ok: true, address: answers[0]! };
}

function parseAuthority(authority: string): { host: string; port: number } | null {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority);
  if (!m) return null;
  const port = Number(m[2]);
  return port > 0 && port < 65536 ? { host: m[1]!, port } : null;
}

const HOP_BY_HOP = new Set(["proxy-connection", "proxy-authorization", "connection", "keep-alive", "transfer-encoding", "upgrade", "te", "trailer"]);

/**
 * `via`: chain every connection through one of the operator's proxies (api.md §12) after the same
 * check, asking it for the checked address: a browser context of a proxied render uses such a
 * listener of its own. `onProxyFailure` hears of the proxy itself failing (it is then paused).
 */
export interface Upstream {
  connect(address: string, port: number): Promise<import("node:stream").Duplex>;
  onProxyFailure?(err: unknown): void;
}

export async function startEgressProxy(options: { allow: AllowList; resolver: Resolver; log?: (msg: string) => void; idleMs?: number; via?: Upstream }): Promise<EgressProxy> {
  const idleMs = options.idleMs ?? UPSTREAM_IDLE_MS;
  const refused: string[] = [];
  const refuse = (target: string, why: string) => {
    refused.push(`${target}: ${why}`);
    options.log?.(`browser egress refused ${target}: ${why}`);
  };
  // The browser's connections to the proxy, and the proxy's to hosts, each until it closes.
  const sockets = new Set<net.Socket>();
  const upstreams = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    if (upstreams.has(s)) return;
    upstreams.add(s);
    s.once("close", () => upstreams.delete(s));
  };
  // Its own pool, emptied on close: a socket between requests is kept for 5 s (Node's default), no longer.
  const agent = new http.Agent({ keepAlive: true, timeout: FREE_SOCKET_MS });

  const server = http.createServer(async (req, res) => {
    // Plain HTTP through a proxy comes in absolute form: GET http://host:port/path HTTP/1.1
    let target: URL;
    try {
      target = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (target.protocol !== "http:") {
      refuse(target.href, "not http");
      res.writeHead(403).end();
      return;
    }
    const port = Number(target.port) || 80;
    const verdict = await checkTarget(target.hostname, port, options.allow, options.resolver);
    if (!verdict.ok) {
      refuse(`${target.hostname}:${port}`, verdict.why);
      res.writeHead(403, { "content-type": "text/plain", "x-quarry-egress": verdict.unresolvable ? "unresolvable" : "refused" }).end("Refused by Quarry's egress policy.");
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
    let tunnel: import("node:stream").Duplex | null = null;
    if (options.via) {
      try {
        tunnel = await options.via.connect(verdict.address, port);
      } catch (err) {
        options.via.onProxyFailure?.(err);
        res.writeHead(502, { "content-type": "text/plain", "x-quarry-egress": "unreachable", "x-quarry-egress-error": "EPROXY" }).end("Quarry's egress proxy could not go through the operator's proxy.");
        return;
      }
    }
    const upstream = http.request(
      {
        host: verdict.address, port, method: req.method, path: `${target.pathname}${target.search}`, headers, setHost: false, timeout: idleMs,
        // No agent with a tunnel: Node uses `createConnection` only when no agent (not even `false`) is given.
        ...(tunnel ? { createConnection: () => tunnel as net.Socket } : { agent }),
      },
      (up) => {
        const raw: string[] = [];
        for (let i = 0; i + 1 < up.rawHeaders.length; i += 2) {
          const name = up.rawHeaders[i]!.toLowerCase();
          if (!HOP_BY_HOP.has(name) && name !== "x-quarry-egress") raw.push(up.rawHeaders[i]!, up.rawHeaders[i + 1]!);
        }
        res.writeHead(up.statusCode ?? 502, raw);
        up.pipe(res);
      },
    );
    upstream.on("socket", track);
    // Silent for idleMs (no answer begun, or a body that stopped): given up on, as a fetch that timed out.
    upstream.on("timeout", () => upstream.destroy(Object.assign(new Error(`no answer within ${idleMs} ms`), { code: "ETIMEDOUT" })));
    upstream.on("error", (err: NodeJS.ErrnoException) => {
      if (res.headersSent || res.destroyed) return void res.destroy();
      // No answer from the host at all: marked, so the page fails as unreachable (a 502 page would look like an answer).
      const code = err.code ?? "";
      const headers = unreachableCode(code) ? { "x-quarry-egress": "unreachable", "x-quarry-egress-error": code } : {};
      res.writeHead(code === "ETIMEDOUT" ? 504 : 502, { "content-type": "text/plain", ...headers }).end(`Quarry's egress proxy got no answer from ${target.host} (${code || err.message}).`);
    });
    // The browser gave up on this request (its page closed, the render ended): so does the proxy.
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.on("error", () => upstream.destroy());
    req.pipe(upstream);
  });

  // HTTPS and WebSockets: CONNECT host:port, then a raw tunnel to a checked address.
  server.on("connect", async (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    const authority = parseAuthority(req.url ?? "");
    if (!authority) {
      client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
      return;
    }
    const verdict = await checkTarget(authority.host, authority.port, options.allow, options.resolver);
    if (!verdict.ok) {
      refuse(`${authority.host}:${authority.port}`, verdict.why);
      client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    if (client.destroyed) return; // the browser left while the name was looked up
    let upstream: net.Socket;
    if (options.via) {
      try {
        upstream = (await options.via.connect(verdict.address, authority.port)) as net.Socket;
      } catch (err) {
        options.via.onProxyFailure?.(err);
        client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
        return;
      }
      if (client.destroyed) return void upstream.destroy();
      // Already connected through the proxy: the tunnel opens at once.
      setImmediate(() => upstream.emit("connect"));
    } else upstream = net.connect({ host: verdict.address, port: authority.port });
    track(upstream);
    let open = false;
    // A tunnel is one thing: either side closing, failing or going silent ends both (a host that
    // ignores the browser's FIN would otherwise hold its socket for ever).
    upstream.setTimeout(idleMs, () => upstream.destroy());
    client.setTimeout(idleMs, () => client.destroy());
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => {
      if (open) client.destroy();
    });
    client.once("end", () => upstream.destroy());
    upstream.once("end", () => client.end());
    upstream.once("connect", () => {
      open = true;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client, { end: false });
      client.pipe(upstream, { end: false });
    });
    upstream.on("error", () => {
      if (!open && !client.destroyed) client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
      else client.destroy();
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refused,
    sockets: () => ({ client: sockets.size, upstream: upstreams.size }),
    close: () =>
      new Promise((resolve) => {
        for (const s of [...sockets, ...upstreams]) s.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
