/**
 * QUARRY_TRUST_PROXY over real HTTP: a list of proxy addresses means only those peers may name
 * the client in X-Forwarded-For; any other peer is limited by its own address, whatever it sends.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTrustProxy, clientAddress } from "../../core/net/trusted-proxies.ts";
import { startServer, tempDataDir, type Server } from "../helpers/server.ts";

function get(url: string, from: string, forwardedFor?: string): Promise<number> {
  const u = new URL(`${url}/health`);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, localAddress: from, agent: false, headers: forwardedFor ? { "x-forwarded-for": forwardedFor } : {} }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("QUARRY_TRUST_PROXY with a list of proxies (real server)", () => {
  let s: Server;
  beforeAll(async () => {
    // A bucket of 2 that refills once a minute: the third request from one client is refused.
    s = await startServer("node", { QUARRY_DATA_DIR: tempDataDir(), QUARRY_IP_RATE: "0.016/2", QUARRY_TRUST_PROXY: "127.0.0.8, 10.0.0.0/8" });
  }, 60_000);
  afterAll(async () => {
    expect(await s?.stop()).toBe(0);
  });

  it("a client that is not a listed proxy cannot pick its address with X-Forwarded-For", async () => {
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push(await get(s.url, "127.0.0.9", `203.0.113.${i}`));
    expect(codes).toEqual([200, 200, 429, 429]);
  });

  it("behind a listed proxy each forwarded client has its own bucket; listed hops are skipped", async () => {
    expect(await get(s.url, "127.0.0.8", "198.51.100.1")).toBe(200);
    expect(await get(s.url, "127.0.0.8", "198.51.100.1")).toBe(200);
    expect(await get(s.url, "127.0.0.8", "198.51.100.1")).toBe(429);
    // Another client through the same proxy, passing an inner proxy (10.1.2.3) on the way.
    expect(await get(s.url, "127.0.0.8", "198.51.100.2, 10.1.2.3")).toBe(200);
    // A client-written entry left of the real client changes nothing.
    expect(await get(s.url, "127.0.0.8", "1.2.3.4, 198.51.100.1")).toBe(429);
  });
});

describe("trusted proxy parsing", () => {
  it("accepts booleans and address lists, and names a bad entry", () => {
    expect(parseTrustProxy("true")).toBe(true);
    expect(parseTrustProxy("")).toBe(false);
    expect(() => parseTrustProxy("10.0.0.0/8,proxy.local")).toThrow(/"proxy.local" is not an IP address or CIDR/);
    expect(() => parseTrustProxy("10.0.0.0/99")).toThrow(/"10.0.0.0\/99"/);
  });

  it("true believes the right-most entry from anyone; a list only from listed peers", () => {
    expect(clientAddress(true, "192.0.2.1", "6.6.6.6, 7.7.7.7")).toBe("7.7.7.7");
    const list = parseTrustProxy("::1, 10.0.0.0/8");
    expect(clientAddress(list, "192.0.2.1", "7.7.7.7")).toBe("192.0.2.1");
    expect(clientAddress(list, "::ffff:10.0.0.5", "7.7.7.7, 10.9.9.9")).toBe("7.7.7.7");
    expect(clientAddress(list, "::1", "10.1.1.1")).toBe("10.1.1.1");
  });
});
