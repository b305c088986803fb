/**
 * A raw connection to `host:port` through one of the operator's proxies (QUARRY_PROXIES): a
 * CONNECT tunnel over http:// or https://, or a SOCKS5 connection (the `socks` package). The
 * browser's egress proxy chains through it (adapters/browser/egress-proxy.ts) after checking the
 * target itself, and always passes the checked address, so the proxy connects exactly there.
 * A failure to reach or use the proxy is marked `proxySide` (the proxy is paused for it).
 */
import * as http from "node:http";
import * as https from "node:https";
import { isIPv6 } from "node:net";
import type { Duplex } from "node:stream";
import { UpstreamNetworkError } from "../../core/net/fetch-errors.ts";
import type { ResolvedProxy } from "./proxy.ts";

const proxyFailure = (why: string, code = "") => new UpstreamNetworkError("The proxy could not be used.", `${code} ${why}`.trim(), { proxySide: true });

export async function connectThrough(proxy: ResolvedProxy, host: string, port: number): Promise<Duplex> {
  const proxyHost = proxy.url.hostname.replace(/^\[|\]$/g, "");
  if (proxy.protocol === "socks5:") {
    const { SocksClient } = await import("socks");
    try {
      const { socket } = await SocksClient.createConnection({
        proxy: {
          host: proxyHost, port: Number(proxy.url.port), type: 5,
          ...(proxy.url.username ? { userId: decodeURIComponent(proxy.url.username), password: decodeURIComponent(proxy.url.password) } : {}),
        },
        command: "connect",
        destination: { host, port },
      });
      return socket;
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      if (/rejected connection/i.test(message)) throw new UpstreamNetworkError(`The proxy could not reach ${host}:${port}.`, message, { unreachable: true });
      throw proxyFailure(message, (err as NodeJS.ErrnoException).code);
    }
  }
  const tls = proxy.protocol === "https:";
  const authority = `${isIPv6(host) ? `[${host}]` : host}:${port}`;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: authority };
    if (proxy.authorization) headers["proxy-authorization"] = proxy.authorization;
    const req = (tls ? https : http).request({ host: proxyHost, port: Number(proxy.url.port) || (tls ? 443 : 80), method: "CONNECT", path: authority, headers, agent: false });
    req.on("error", (err: NodeJS.ErrnoException) => reject(proxyFailure(err.message, err.code)));
    req.on("connect", (res, socket, head) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        const unreachable = res.statusCode === 502 || res.statusCode === 504;
        reject(unreachable ? new UpstreamNetworkError(`The proxy could not reach ${authority}.`, `HTTP ${res.statusCode}`, { unreachable }) : proxyFailure(`CONNECT answered ${res.statusCode}`));
        return;
      }
      if (head.length) socket.unshift(head);
      resolve(socket);
    });
    req.end();
  });
}
