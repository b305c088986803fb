/**
 * Real proxies on loopback for the tests of issue #32: an HTTP forward proxy (CONNECT tunnels and
 * absolute-form requests) and a SOCKS5 server (RFC 1928, user/password per RFC 1929). Both would
 * connect ANYWHERE they are asked to, the way an operator's rented proxy does, and both connect out
 * from `localAddress` (127.0.0.3 by default), so a site on 127.0.0.1 can tell a read that came
 * through a proxy from one that came straight from Quarry. Each records every target it was asked
 * for, so a test can prove a refused target never reached the proxy; `kill()` makes one die.
 */
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, createServer as createNetServer, type Server, type Socket } from "node:net";

export interface TestProxy {
  /** `http://127.0.0.1:port` or `socks5://127.0.0.1:port`, credentials added when the proxy wants them. */
  url: string;
  port: number;
  /** Every `host:port` (or absolute URL) it was asked to reach, in order. */
  asked: string[];
  /** Proxy-Authorization / SOCKS credentials it refused. */
  refused: number;
  /** Stops at once: the listening socket and every open connection. */
  kill(): Promise<void>;
}

interface Options {
  localAddress?: string;
  /** `user:pass` the proxy requires. */
  auth?: string;
}

function tracked(server: Server) {
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  return () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
}

function splitHostPort(authority: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(authority);
  return m ? { host: m[1]!, port: Number(m[2]) } : { host: authority, port: 80 };
}

export async function startHttpProxy(options: Options = {}): Promise<TestProxy> {
  const localAddress = options.localAddress ?? "127.0.0.3";
  const expected = options.auth ? `Basic ${Buffer.from(options.auth).toString("base64")}` : null;
  const state = { asked: [] as string[], refused: 0 };
  const allowed = (req: IncomingMessage) => {
    if (!expected || req.headers["proxy-authorization"] === expected) return true;
    state.refused++;
    return false;
  };
  const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    // Absolute-form forward: GET http://host/path.
    state.asked.push(req.url ?? "");
    if (!allowed(req)) return void res.writeHead(407, { "proxy-authenticate": 'Basic realm="test"' }).end();
    const target = new URL(req.url ?? "");
    const headers = { ...req.headers };
    delete headers["proxy-authorization"];
    const out = httpRequest({ host: target.hostname, port: target.port || 80, path: target.pathname + target.search, method: req.method, headers, localAddress }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on("error", () => res.writeHead(502).end());
    req.pipe(out);
  });
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    state.asked.push(req.url ?? "");
    if (!allowed(req)) return void client.end("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n");
    const { host, port } = splitHostPort(req.url ?? "");
    const up = connect({ host, port, localAddress }, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    up.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
    client.on("error", () => up.destroy());
  });
  const kill = tracked(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  const creds = options.auth ? `${options.auth.split(":").map(encodeURIComponent).join(":")}@` : "";
  return {
    url: `http://${creds}127.0.0.1:${port}`,
    port,
    get asked() { return state.asked; },
    get refused() { return state.refused; },
    kill,
  };
}

/** A SOCKS5 server: no-auth or user/password, CONNECT only, IPv4 / domain / IPv6 destinations. */
export async function startSocksProxy(options: Options = {}): Promise<TestProxy> {
  const localAddress = options.localAddress ?? "127.0.0.3";
  const state = { asked: [] as string[], refused: 0 };
  const server = createNetServer((client) => {
    client.on("error", () => {});
    let buf = Buffer.alloc(0);
    let phase: "greet" | "auth" | "request" | "done" = "greet";
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (phase === "greet") {
          if (buf.length < 2 || buf.length < 2 + buf[1]!) return;
          const methods = [...buf.subarray(2, 2 + buf[1]!)];
          buf = buf.subarray(2 + buf[1]!);
          const want = options.auth ? 2 : 0;
          if (!methods.includes(want)) return void client.end(Buffer.from([5, 0xff]));
          client.write(Buffer.from([5, want]));
          phase = options.auth ? "auth" : "request";
        } else if (phase === "auth") {
          if (buf.length < 2) return;
          const ulen = buf[1]!;
          if (buf.length < 3 + ulen) return;
          const plen = buf[2 + ulen]!;
          if (buf.length < 3 + ulen + plen) return;
          const user = buf.subarray(2, 2 + ulen).toString();
          const pass = buf.subarray(3 + ulen, 3 + ulen + plen).toString();
          buf = buf.subarray(3 + ulen + plen);
          if (`${user}:${pass}` !== options.auth) {
            state.refused++;
            return void client.end(Buffer.from([1, 1]));
          }
          client.write(Buffer.from([1, 0]));
          phase = "request";
        } else if (phase === "request") {
          if (buf.length < 5) return;
          const atyp = buf[3]!;
          const addrLen = atyp === 1 ? 4 : atyp === 4 ? 16 : 1 + buf[4]!;
          if (buf.length < 4 + addrLen + 2) return;
          const addr = buf.subarray(4, 4 + addrLen);
          const host = atyp === 1 ? [...addr].join(".") : atyp === 4 ? (addr.toString("hex").match(/.{4}/g) ?? []).join(":") : addr.subarray(1).toString();
          const port = buf.readUInt16BE(4 + addrLen);
          buf = buf.subarray(4 + addrLen + 2);
          phase = "done";
          client.off("data", onData);
          state.asked.push(`${host}:${port}`);
          const up = connect({ host, port, localAddress }, () => {
            client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 3, 0, 0]));
            if (buf.length) up.write(buf);
            up.pipe(client);
            client.pipe(up);
          });
          up.on("error", () => client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])));
          return;
        } else return;
      }
    };
    client.on("data", onData);
  });
  const kill = tracked(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  const creds = options.auth ? `${options.auth.split(":").map(encodeURIComponent).join(":")}@` : "";
  return {
    url: `socks5://${creds}127.0.0.1:${port}`,
    port,
    get asked() { return state.asked; },
    get refused() { return state.refused; },
    kill,
  };
}

/**
 * A site behind a wall for the address Quarry reads from: requests arriving from 127.0.0.1 get
 * `wall` (a 403 Cloudflare challenge by default), requests from 127.0.0.3 (through a test proxy)
 * get the page (`everyone`: the wall for every reader). `reads` counts each, by where it came from.
 */
export async function startWalledSite(pages: Record<string, string>, wall: { status: number; body: string; headers?: Record<string, string> }, options: { everyone?: boolean; onServed?: (path: string, proxied: boolean) => void } = {}) {
  const reads = { direct: 0, proxied: 0, paths: [] as string[], languages: [] as string[] };
  const server = createHttpServer((req, res) => {
    const proxied = req.socket.remoteAddress === "127.0.0.3";
    proxied ? reads.proxied++ : reads.direct++;
    reads.paths.push(`${proxied ? "proxied" : "direct"} ${req.url}`);
    reads.languages.push(String(req.headers["accept-language"] ?? ""));
    const page = pages[(req.url ?? "").split("?")[0]!];
    if (!proxied || options.everyone) return void res.writeHead(wall.status, { "content-type": "text/html; charset=utf-8", ...wall.headers }).end(wall.body);
    if (page === undefined) return void res.writeHead(404, { "content-type": "text/html" }).end("<h1>not here</h1>");
    res.on("finish", () => options.onServed?.(req.url ?? "", proxied));
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "x-seen-language": String(req.headers["accept-language"] ?? "") }).end(page);
  });
  const close = tracked(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, port, reads, close };
}
