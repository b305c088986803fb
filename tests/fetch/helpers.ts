/**
 * Local servers for the page-fetch tests: every target lives on this machine (127.0.0.1,
 * 127.0.0.2, ::1) and records each connection and request, so a test can assert that a refused
 * fetch reached nothing at all. Plain node:http, so Deno and Bun can run it too (runtime-smoke.ts).
 */
// test-kind: in-process (openssl runs to completion; nothing here starts a process that outlives a call)
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import * as net from "node:net";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface TestServer {
  host: string;
  port: number;
  /** `http://127.0.0.1:1234` (brackets for IPv6). */
  origin: string;
  /** "METHOD url" for every request that arrived. */
  requests: string[];
  /** Every request's headers, in order. */
  headers: http.IncomingHttpHeaders[];
  connections: number;
  close(): Promise<void>;
}

export async function startServer(host: string, handler: Handler, tls?: { key: string; cert: string }): Promise<TestServer> {
  const requests: string[] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  const sockets = new Set<Socket>();
  const wrapped: Handler = (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    headers.push(req.headers);
    handler(req, res);
  };
  const server = tls ? https.createServer(tls, wrapped) : http.createServer(wrapped);
  const state = { connections: 0 };
  server.on(tls ? "secureConnection" : "connection", () => state.connections++);
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    host,
    port,
    origin: `${tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}`,
    requests,
    headers,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A resolver that knows only the names it is given (tests never touch real DNS). */
export function mapResolver(map: Record<string, string[]>): (host: string) => Promise<string[]> {
  return async (host) => {
    const answer = map[host.toLowerCase()];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return answer;
  };
}

/** Runs `fn`, expecting it to reject; returns the error. */
export async function rejection(fn: () => Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await fn();
  } catch (err) {
    return err as Error & Record<string, unknown>;
  }
  throw new Error("expected a rejection, got a result");
}

/** A tiny forward proxy (absolute-form and CONNECT) that sends everything to 127.0.0.1. */
export async function startProxy(): Promise<TestServer & { connects: string[] }> {
  const connects: string[] = [];
  const requests: string[] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const proxy = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    headers.push(req.headers);
    const target = new URL(req.url!);
    const upstream = http.request(
      { host: "127.0.0.1", port: target.port || 80, path: target.pathname + target.search, method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode!, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  const track = (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  };
  proxy.on("connection", (s: Socket) => {
    state.connections++;
    track(s);
  });
  proxy.on("connect", (req: http.IncomingMessage, client: Socket, head: Buffer) => {
    connects.push(req.url!);
    headers.push(req.headers);
    const upstream = net.connect(Number(req.url!.split(":").pop()), "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    track(upstream);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", () => resolve()));
  const port = (proxy.address() as AddressInfo).port;
  return {
    host: "127.0.0.1",
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    headers,
    connects,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        proxy.close(() => resolve());
      }),
  };
}

/**
 * A throwaway CA and a leaf for allowed.test, pinned.test and 127.0.0.1, made by openssl (a tool the
 * tests need, like PostgreSQL and Redis: without it the TLS tests fail saying so, they do not skip).
 */
export function makeCertificates(): { ca: string; key: string; cert: string } {
  if (spawnSync("openssl", ["version"]).status !== 0) {
    throw new Error("openssl is needed to make the TLS tests' certificates and was not found on PATH (apt-get install openssl)");
  }
  // Only the PEM text is needed afterwards, so the folder goes at once.
  const dir = mkdtempSync(join(tmpdir(), "quarry-tls-"));
  try {
    const run = (args: string[]) => {
      const r = spawnSync("openssl", args, { cwd: dir });
      if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
    };
    run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Quarry Test CA"]);
    run(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=allowed.test"]);
    writeFileSync(
      join(dir, "ext.cnf"),
      "subjectAltName=DNS:allowed.test,DNS:pinned.test,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    );
    run(["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "leaf.pem", "-days", "2", "-extfile", "ext.cnf"]);
    const read = (f: string) => readFileSync(join(dir, f), "utf8");
    return { ca: read("ca.pem"), key: read("leaf.key"), cert: read("leaf.pem") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
