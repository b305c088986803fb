/**
 * The browser's egress proxy must not leave connections to a target open (#28 item 2): a page
 * that loads many resources from a host that accepts connections and never answers left 6 open
 * connections per render (78 after 13 renders, still open 30 s later), until the process ran out of
 * file descriptors and every account's requests failed with EMFILE. When the browser's side of a
 * request or tunnel closes, the upstream side is closed too; every upstream socket has an idle
 * timeout; and the proxy counts what it holds open (for /metrics).
 */
import * as http from "node:http";
import * as net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEgressProxy, type EgressProxy } from "../../adapters/browser/egress-proxy.ts";
import { findChromium, type BrowserPool } from "../../adapters/browser/pool.ts";
import { parseAllowList } from "../../adapters/fetch/mod.ts";
import type { TestApp } from "../helpers/app.ts";
import { startRenderApp, type RenderApp } from "./app.ts";
import { renderResolver, SITE_HOST, startRenderSite, type Site } from "./site.ts";

/** A host that accepts every connection and never sends a byte; it closes only when its peer does. */
export async function startSilentHost(host = SITE_HOST): Promise<{ port: number; open(): number; accepted(): number; changed(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  let wake: (() => void)[] = [];
  const changed = () => {
    for (const w of wake.splice(0)) w();
  };
  const server = net.createServer((s) => {
    accepted++;
    sockets.add(s);
    s.on("error", () => {});
    s.on("close", () => (sockets.delete(s), changed()));
    s.resume();
    changed();
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    open: () => sockets.size,
    accepted: () => accepted,
    changed: () => new Promise<void>((r) => wake.push(r)),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      wake = [];
    },
  };
}

/** Waits until `ok()` holds, woken by `changed()` (a socket opened or closed), at most `ms`. */
export async function until(ok: () => boolean, changed: () => Promise<void>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!ok()) {
    const left = end - Date.now();
    if (left <= 0) return false;
    await Promise.race([changed(), new Promise((r) => setTimeout(r, Math.min(left, 250)))]);
  }
  return true;
}

describe("the egress proxy closes what the browser gave up on", () => {
  let silent: Awaited<ReturnType<typeof startSilentHost>>;
  let proxy: EgressProxy;
  const proxyPort = () => Number(new URL(proxy.url).port);

  beforeAll(async () => {
    silent = await startSilentHost();
    proxy = await startEgressProxy({ allow: parseAllowList([`${SITE_HOST}/32`]), resolver: renderResolver(), idleMs: 60_000 });
  });
  afterAll(async () => {
    await proxy?.close();
    await silent?.close();
  });

  it("plain HTTP: the browser's request closed, the connection to the host is closed", async () => {
    const before = silent.accepted();
    const reqs = Array.from({ length: 6 }, (_, i) => {
      const req = http.request({ host: "127.0.0.1", port: proxyPort(), method: "GET", path: `http://${SITE_HOST}:${silent.port}/r${i}`, agent: false });
      req.on("error", () => {});
      req.end();
      return req;
    });
    expect(await until(() => silent.accepted() - before === 6, silent.changed, 5_000)).toBe(true);
    for (const r of reqs) r.destroy();
    expect(await until(() => silent.open() === 0, silent.changed, 5_000)).toBe(true);
    expect(await until(() => proxy.sockets().upstream === 0 && proxy.sockets().client === 0, silent.changed, 2_000)).toBe(true);
  });

  it("CONNECT: the tunnel's browser side closed, its host side is closed", async () => {
    const before = silent.accepted();
    const clients = await Promise.all(Array.from({ length: 4 }, () => new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect(proxyPort(), "127.0.0.1", () => s.write(`CONNECT ${SITE_HOST}:${silent.port} HTTP/1.1\r\nHost: ${SITE_HOST}:${silent.port}\r\n\r\n`));
      s.once("data", (d) => (String(d).startsWith("HTTP/1.1 200") ? resolve(s) : reject(new Error(String(d)))));
      s.on("error", () => {});
    })));
    expect(silent.accepted() - before).toBe(4);
    for (const s of clients) s.write("\x16\x03\x01 a TLS hello the host never answers");
    // Half the tunnels end cleanly (a FIN), half are torn down.
    clients.forEach((s, i) => (i % 2 ? s.end() : s.destroy()));
    expect(await until(() => silent.open() === 0, silent.changed, 5_000)).toBe(true);
  });

  it("an upstream socket that stays silent is closed after the idle timeout, and the browser told", async () => {
    const quick = await startEgressProxy({ allow: parseAllowList([`${SITE_HOST}/32`]), resolver: renderResolver(), idleMs: 300 });
    try {
      const port = Number(new URL(quick.url).port);
      const answer = new Promise<{ status: number; egress: string | undefined }>((resolve, reject) => {
        const req = http.request({ host: "127.0.0.1", port, method: "GET", path: `http://${SITE_HOST}:${silent.port}/slow`, agent: false }, (res) => {
          res.resume();
          resolve({ status: res.statusCode!, egress: res.headers["x-quarry-egress"] as string | undefined });
        });
        req.on("error", reject);
        req.end();
      });
      const tunnel = new Promise<string>((resolve) => {
        const s = net.connect(port, "127.0.0.1", () => s.write(`CONNECT ${SITE_HOST}:${silent.port} HTTP/1.1\r\n\r\n`));
        s.on("data", () => {});
        s.on("error", () => {});
        s.on("close", () => resolve("closed"));
      });
      // Both held open by the client side; the proxy gives up on the silent host by itself.
      const within = <T>(p: Promise<T>) => Promise.race([p, new Promise<string>((r) => setTimeout(() => r("still open after 5 s"), 5_000))]);
      expect(await within(answer)).toEqual({ status: 504, egress: "unreachable" });
      expect(await within(tunnel)).toBe("closed");
      expect(await until(() => silent.open() === 0, silent.changed, 5_000)).toBe(true);
      expect(await until(() => quick.sockets().client + quick.sockets().upstream === 0, silent.changed, 2_000)).toBe(true);
    } finally {
      await quick.close();
    }
  });
});

/** The browser Quarry would find by itself. */
const CHROMIUM = findChromium(null);

describe.skipIf(!CHROMIUM)("renders of a page whose resources never answer", () => {
  let site: Site;
  let silent: Awaited<ReturnType<typeof startSilentHost>>;
  let app: RenderApp;
  let pool: BrowserPool;
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    site = await startRenderSite();
    silent = await startSilentHost();
    app = await startRenderApp(site, { executablePath: CHROMIUM, warm: true });
    ({ pool, t, key } = app);
  }, 90_000);
  afterAll(async () => {
    await app?.close();
    await silent?.close();
    await site?.close();
  });

  it("leaves no connection to the host open once the renders are over", async () => {
    const renders = await Promise.all(Array.from({ length: 3 }, () =>
      t.request("/v1/scrape", { method: "POST", key, json: { url: `${site.url}/hang-assets?port=${silent.port}`, render: "always", formats: ["text"], timeout_ms: 6_000 } })));
    for (const res of renders) {
      expect(res.status).toBe(200);
      expect((await res.json()).data.text).toContain("lighthouse keeper");
    }
    // Every render had its connections open to the host (scripts over http and https, fetches)...
    expect(silent.accepted()).toBeGreaterThanOrEqual(3 * 6);
    // ...and none is left once they are over.
    expect(await until(() => silent.open() === 0, silent.changed, 5_000), `${silent.open()} still open`).toBe(true);
    expect(await until(() => pool.egressSockets!().upstream === 0, silent.changed, 2_000)).toBe(true);
  }, 60_000);
});
