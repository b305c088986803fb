/**
 * Slow and odd clients against real server processes over real sockets (issue #19 item 2 and
 * part of item 6). Other client addresses are other 127.0.0.x loopback addresses.
 */
import { spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, startServer, tempDataDir, type Server } from "../helpers/server.ts";

interface Slow {
  socket: Socket;
  data: () => string;
  closed: Promise<void>;
  isClosed: () => boolean;
}

/** A connection from `from` that sends `bytes` and then nothing more. */
function openSlow(url: string, from: string, bytes = "GET /health HTTP/1.1\r\nHost: quarry\r\n"): Promise<Slow> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress: from });
    let data = "";
    let closed = false;
    const done = new Promise<void>((r) => socket.once("close", () => ((closed = true), r())));
    socket.on("data", (d) => (data += d));
    socket.on("error", () => {});
    socket.once("connect", () => {
      socket.write(bytes);
      resolve({ socket, data: () => data, closed: done, isClosed: () => closed });
    });
    socket.once("close", () => resolve({ socket, data: () => data, closed: done, isClosed: () => true }));
  });
}

/** The JSON error body and its request id header from a raw HTTP/1.1 answer. */
function parseRaw(raw: string): { status: number; requestId: string | undefined; body: { error: { code: string; request_id: string; message: string } } } {
  const [head, body] = raw.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), requestId: /x-request-id: (\S+)/i.exec(head)?.[1], body: JSON.parse(body) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function health(url: string): Promise<number | string> {
  try {
    return (await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) })).status;
  } catch (e) {
    return String((e as Error).cause ?? e);
  }
}

describe("Node under ~1,000 half-sent connections from one address", () => {
  // A low open-file limit, as on a small host: without the per-address cap, the half-sent
  // connections exhaust the descriptors and every other client is refused.
  const fdLimit = 200;
  let url = "";
  let out = "";
  let proc: ReturnType<typeof spawn>;
  beforeAll(async () => {
    proc = spawn("sh", ["-c", `ulimit -n ${fdLimit} && exec "$0" "$@"`, process.execPath, join(ROOT, "bin/quarry.js"), "serve"], {
      cwd: ROOT,
      env: { ...process.env, QUARRY_HOST: "127.0.0.1", QUARRY_PORT: "0", QUARRY_DATA_DIR: tempDataDir(), QUARRY_MAX_CONNECTIONS_PER_ADDRESS: "20", QUARRY_HEADER_TIMEOUT: "3", QUARRY_IP_RATE: "off" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    proc.stdout!.on("data", (d) => (out += d));
    proc.stderr!.on("data", (d) => (out += d));
    const until = Date.now() + 40_000;
    while (!/"url":"(http:[^"]+)"/.test(out)) {
      if (Date.now() > until || proc.exitCode !== null) throw new Error(`server did not start:\n${out}`);
      await sleep(50);
    }
    url = /"url":"(http:[^"]+)"/.exec(out)![1];
  }, 60_000);
  afterAll(() => {
    proc?.kill("SIGTERM");
  });

  it("keeps serving other addresses; refuses the flood past the cap; times out the rest with a 408", async () => {
    const flood: Slow[] = [];
    for (let i = 0; i < 1000; i++) flood.push(await openSlow(url, "127.0.0.2"));
    await sleep(500);
    // Everyone else is still served while the flood holds its connections.
    for (let i = 0; i < 5; i++) expect(await health(url)).toBe(200);
    const open = flood.filter((s) => !s.isClosed());
    expect(open.length).toBeLessThanOrEqual(20);
    const refused = flood.find((s) => s.isClosed() && s.data())!;
    const r = parseRaw(refused.data());
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe("rate_limited");
    expect(r.requestId).toBe(r.body.error.request_id);
    // The ones admitted are cut off once the header timeout (3 s) has passed.
    const started = Date.now();
    await Promise.race([Promise.all(open.map((s) => s.closed)), sleep(8000)]);
    expect(open.every((s) => s.isClosed())).toBe(true);
    expect(Date.now() - started).toBeLessThan(6000);
    const timedOut = parseRaw(open[0].data());
    expect(timedOut.status).toBe(408);
    expect(timedOut.body.error.code).toBe("timeout");
    expect(timedOut.requestId).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(await health(url)).toBe(200);
  }, 90_000);
});

describe("Node connection caps and parser errors", () => {
  let s: Server;
  beforeAll(async () => {
    s = await startServer("node", {
      QUARRY_DATA_DIR: tempDataDir(),
      QUARRY_IP_RATE: "off",
      QUARRY_MAX_CONNECTIONS: "10",
      QUARRY_MAX_CONNECTIONS_PER_ADDRESS: "5",
      QUARRY_KEEP_ALIVE_MAX_REQUESTS: "3",
    });
  }, 60_000);
  afterAll(async () => {
    expect(await s?.stop()).toBe(0);
  });

  it("past the total cap a new connection gets a 503 at once, and is served again once others close", async () => {
    const held = [...(await Promise.all(Array.from({ length: 5 }, () => openSlow(s.url, "127.0.0.3")))), ...(await Promise.all(Array.from({ length: 5 }, () => openSlow(s.url, "127.0.0.4"))))];
    await sleep(200);
    expect(held.every((h) => !h.isClosed())).toBe(true);
    const extra = await openSlow(s.url, "127.0.0.5");
    await Promise.race([extra.closed, sleep(3000)]);
    expect(extra.isClosed()).toBe(true);
    const r = parseRaw(extra.data());
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe("service_unavailable");
    for (const h of held) h.socket.destroy();
    await sleep(200);
    expect(await health(s.url)).toBe(200);
  }, 30_000);

  it.each([
    ["a bad Content-Length", "POST /v1/keys HTTP/1.1\r\nHost: q\r\nContent-Length: 12abc\r\n\r\n"],
    ["both Content-Length and Transfer-Encoding", "POST /v1/keys HTTP/1.1\r\nHost: q\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"],
    ["bytes not valid in a path", "GET /v1/\x01search HTTP/1.1\r\nHost: q\r\n\r\n"],
  ])("%s gets a 400 with the JSON error shape and a request id", async (_name, bytes) => {
    const c = await openSlow(s.url, "127.0.0.6", bytes);
    await Promise.race([c.closed, sleep(5000)]);
    const r = parseRaw(c.data());
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_request");
    expect(r.body.error.message).toMatch(/not valid HTTP\/1\.1/);
    expect(r.requestId).toBe(r.body.error.request_id);
    expect(c.data()).toMatch(/x-ratelimit-limit: 1000/i);
  });

  it("closes a keep-alive connection after QUARRY_KEEP_ALIVE_MAX_REQUESTS requests", async () => {
    const c = await openSlow(s.url, "127.0.0.7", "");
    const answers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const before = c.data().length;
      c.socket.write("GET /health HTTP/1.1\r\nHost: q\r\n\r\n");
      const until = Date.now() + 5000;
      while (!/\r\n\r\n\{[^]*\}$/.test(c.data().slice(before)) && Date.now() < until) await sleep(20);
      answers.push(c.data().slice(before));
    }
    expect(answers.map((a) => a.split(" ")[1])).toEqual(["200", "200", "200"]);
    expect(answers[1]).toMatch(/connection: keep-alive/i);
    expect(answers[2]).toMatch(/connection: close/i);
  });
});

describe("Bun's connection timers", () => {
  it("closes idle keep-alive connections after QUARRY_KEEP_ALIVE_TIMEOUT, half-sent headers after its own ~10 s", async () => {
    const s = await startServer("bun", { QUARRY_DATA_DIR: tempDataDir(), QUARRY_KEEP_ALIVE_TIMEOUT: "2" });
    try {
      const started = Date.now();
      const idle = await openSlow(s.url, "127.0.0.2", "GET /health HTTP/1.1\r\nHost: q\r\n\r\n");
      const half = await openSlow(s.url, "127.0.0.2");
      await Promise.race([idle.closed, sleep(10_000)]);
      expect(idle.data()).toMatch(/^HTTP\/1\.1 200/);
      expect(Date.now() - started).toBeLessThan(8000);
      await Promise.race([half.closed, sleep(20_000)]);
      expect(half.isClosed()).toBe(true);
    } finally {
      await s.stop();
    }
  }, 60_000);
});
