/** QUARRY_PROXIES (core/net/proxy-pool.ts, api.md §12): the list's format, rotation per host, pauses, and credentials never shown. */
import { describe, expect, it } from "vitest";
import { parseConfig, ConfigError } from "../../core/config.ts";
import { parseProxies, ProxyPool } from "../../core/net/proxy-pool.ts";

describe("parseProxies", () => {
  it("reads country and pool tags, schemes and credentials; labels carry no credentials", () => {
    const list = parseProxies("de:residential=http://user:p%40ss@de.example:8080, us=socks5://u:pw@10.0.0.5:1080\n:dc=https://proxy.example:8443 http://plain.example:3128 socks5h://s.example:1080");
    expect(list.map(({ id, label, protocol, country, pool }) => ({ id, label, protocol, country, pool }))).toEqual([
      { id: "p1", label: "de:residential http://de.example:8080", protocol: "http:", country: "de", pool: "residential" },
      { id: "p2", label: "us socks5://10.0.0.5:1080", protocol: "socks5:", country: "us", pool: "default" },
      { id: "p3", label: ":dc https://proxy.example:8443", protocol: "https:", country: null, pool: "dc" },
      { id: "p4", label: "http://plain.example:3128", protocol: "http:", country: null, pool: "default" },
      { id: "p5", label: "socks5://s.example:1080", protocol: "socks5:", country: null, pool: "default" },
    ]);
    expect(list[0]!.url).toBe("http://user:p%40ss@de.example:8080/");
    expect(parseProxies(undefined)).toEqual([]);
    expect(parseProxies("  ")).toEqual([]);
  });

  it("refuses what it cannot use, naming the entry by its place and never its credentials", () => {
    const bad = ["ftp://u:secretpw@x.example:21", "d3:x=http://u:secretpw@x.example:1", "none=http://u:secretpw@x.example:1", "socks5://u:secretpw@x.example", "not a url secretpw", "de:bad pool=http://x:1"];
    for (const text of bad) {
      let err: unknown;
      try {
        parseConfig({ QUARRY_PROXIES: text });
      } catch (e) {
        err = e;
      }
      expect(err, text).toBeInstanceOf(ConfigError);
      expect((err as Error).message, text).toMatch(/^QUARRY_PROXIES: entry \d/);
      expect((err as Error).message, text).not.toContain("secretpw");
    }
  });
});

describe("ProxyPool", () => {
  const list = parseProxies("de=http://a.example:1 de:res=http://b.example:2 fr=http://c.example:3");

  it("rotates per host among the candidates of a choice", () => {
    const pool = new ProxyPool(list);
    const seq = (host: string, ask = {}) => Array.from({ length: 4 }, () => pool.pick(host, ask).entry!.id);
    expect(seq("x.test")).toEqual(["p1", "p2", "p3", "p1"]);
    // Another host has its own turn.
    expect(seq("y.test")).toEqual(["p1", "p2", "p3", "p1"]);
    expect(seq("z.test", { country: "DE" })).toEqual(["p1", "p2", "p1", "p2"]);
    expect(seq("z.test", { pool: "res" })).toEqual(["p2", "p2", "p2", "p2"]);
    expect(pool.pick("z.test", { country: "it" })).toEqual({ entry: null, paused: 0 });
    expect(pool.pools().sort()).toEqual(["default", "res"]);
  });

  it("pauses a failing proxy, longer each time in a row, until a success", () => {
    let now = 0;
    const pool = new ProxyPool(list, { now: () => now, pauseMs: 1000, maxPauseMs: 3000 });
    const p1 = list[0]!;
    pool.failed(p1);
    expect(pool.status()[0]).toMatchObject({ status: "paused", failures: 1, paused_until: new Date(1000).toISOString() });
    expect(pool.pick("h", { pool: "default", country: "de" })).toEqual({ entry: null, paused: 1 });
    now = 1001;
    expect(pool.pick("h", { pool: "default", country: "de" }).entry?.id).toBe("p1");
    pool.failed(p1);
    expect(pool.status()[0]!.paused_until).toBe(new Date(1001 + 2000).toISOString());
    pool.failed(p1);
    expect(pool.status()[0]!.paused_until).toBe(new Date(1001 + 3000).toISOString());
    pool.succeeded(p1);
    expect(pool.status()[0]).toMatchObject({ status: "ok", failures: 0, failed: 3, paused_until: null });
    expect(JSON.stringify(pool.status())).not.toContain("://a.example:1/");
  });
});
