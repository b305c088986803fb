/**
 * A process out of file descriptors fails every request that needs one (a page fetch, a render,
 * the database) with EMFILE, whoever sent it (#28 item 2): /health said `ok` meanwhile. A real
 * server runs here under `ulimit -n 200`; idle client connections (one descriptor each) take it
 * near its limit, and /health must say so, then recover once they are gone. /metrics shows
 * the process's open descriptors and the browser egress proxy's sockets.
 */
import { readdirSync } from "node:fs";
import * as net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, tempDataDir, type Server } from "../helpers/server.ts";

const LIMIT = 200;

describe.skipIf(process.platform !== "linux")("health and metrics see the process's file descriptors", () => {
  let server: Server;
  const held: net.Socket[] = [];
  const fds = () => readdirSync(`/proc/${server.proc.pid}/fd`).length;

  beforeAll(async () => {
    server = await startServer("node", {
      QUARRY_DATA_DIR: tempDataDir(), QUARRY_IP_RATE: "off", QUARRY_METRICS: "true",
      // Idle connections stay open for the test's length rather than timing out.
      QUARRY_HEADER_TIMEOUT: "120", QUARRY_REQUEST_TIMEOUT: "120",
    }, { fileLimit: LIMIT });
  }, 60_000);
  afterAll(async () => {
    for (const s of held) s.destroy();
    await server?.stop();
  });

  const health = async () => (await fetch(`${server.url}/health`)).json();

  it("/health turns degraded near the descriptor limit, naming it, and ok again once they are freed", async () => {
    const calm = await health();
    expect(calm.status).toBe("ok");
    expect(calm.services.file_descriptors).toMatchObject({ status: "ok", limit: LIMIT });
    expect(calm.services.file_descriptors.open).toBeGreaterThan(0);
    expect(calm.services.file_descriptors.open).toBeLessThan(LIMIT * 0.5);

    // One idle connection per descriptor, until the server holds 93 % of its limit (the health request itself takes one more).
    const { port } = new URL(server.url);
    const target = Math.ceil(LIMIT * 0.93);
    while (fds() < target) {
      const opened = await Promise.all(Array.from({ length: target - fds() }, () => new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect(Number(port), "127.0.0.1", () => resolve(s));
        s.on("error", reject);
      })));
      held.push(...opened);
      // Connected is not yet accepted: the server's descriptor count shows when it has them.
      const until = Date.now() + 2_000;
      while (fds() < target && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    }
    const near = await health();
    expect(near.status).toBe("degraded");
    expect(near.services.file_descriptors.status).toBe("near_limit");
    expect(near.services.file_descriptors.limit).toBe(LIMIT);
    expect(near.services.file_descriptors.open).toBeGreaterThanOrEqual(LIMIT * 0.9);

    for (const s of held.splice(0)) s.destroy();
    const until = Date.now() + 10_000;
    while (fds() >= LIMIT * 0.5 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    const after = await health();
    expect(after.status).toBe("ok");
    expect(after.services.file_descriptors.status).toBe("ok");
  }, 60_000);

  it("/metrics gives the open descriptors, their limit and the browser egress proxy's sockets", async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const open = Number(/^quarry_process_open_fds\{[^}]*\} (\d+)$/m.exec(text)?.[1]);
    expect(open).toBeGreaterThan(0);
    expect(text).toMatch(new RegExp(`^quarry_process_max_fds\\{[^}]*\\} ${LIMIT}$`, "m"));
    expect(text).toMatch(/^quarry_browser_egress_sockets\{[^}]*side="client"[^}]*\} 0$/m);
    expect(text).toMatch(/^quarry_browser_egress_sockets\{[^}]*side="upstream"[^}]*\} 0$/m);
  }, 30_000);
});
