/** URL normalisation, scope and trap rules of the crawler (core/jobs/url-rules.ts). */
import { describe, expect, it } from "vitest";
import { frontierKey, outOfScope, TrapGuard } from "../../core/jobs/url-rules.ts";

describe("frontierKey", () => {
  it("folds spellings of one URL into one", () => {
    const same = ["HTTP://Example.COM:80/a//b?z=1&a=2#top", "http://example.com/a/b?a=2&z=1&utm_source=x", "http://example.com/%61/b?a=2&z=1"];
    expect(new Set(same.map((u) => frontierKey(u))).size).toBe(1);
    expect(frontierKey("/x", "http://example.com/a/")).toBe("http://example.com/x");
    // An empty fragment or query, a trailing dot: nothing to keep, so nothing to tell apart.
    for (const u of ["http://example.com./a", "http://example.com/a#", "http://example.com/a?", "http://example.com/a?#x", "http://example.com/a?utm_source=x"]) {
      expect(frontierKey(u), u).toBe("http://example.com/a");
    }
    expect(frontierKey("http://example.com/a?b=2&a=1")).toBe("http://example.com/a?a=1&b=2");
  });
  it("keeps what sites tell apart, drops what no crawler can fetch", () => {
    expect(frontierKey("http://www.example.com/")).not.toBe(frontierKey("http://example.com/"));
    expect(frontierKey("http://example.com/a/")).not.toBe(frontierKey("http://example.com/a"));
    for (const bad of ["mailto:a@b.c", "javascript:alert(1)", "ftp://x/", "http://u:p@x/", "not a url"]) expect(frontierKey(bad)).toBeNull();
  });
});

describe("outOfScope", () => {
  const rules = { startHost: "example.com", allowSubdomains: false, allowExternal: false, include: [] as RegExp[], exclude: [/\/private/] };
  it("same site by default; subdomains and other hosts when asked", () => {
    expect(outOfScope("http://www.example.com/a", rules)).toBeNull();
    expect(outOfScope("http://docs.example.com/a", rules)).toBe("subdomain");
    expect(outOfScope("http://docs.example.com/a", { ...rules, allowSubdomains: true })).toBeNull();
    expect(outOfScope("http://other.org/", rules)).toBe("external");
    expect(outOfScope("http://notexample.com/", { ...rules, allowSubdomains: true })).toBe("external");
    expect(outOfScope("http://other.org/", { ...rules, allowExternal: true })).toBeNull();
  });
  it("include and exclude patterns on the path", () => {
    expect(outOfScope("http://example.com/private/x", rules)).toBe("excluded");
    expect(outOfScope("http://example.com/blog/x", { ...rules, include: [/^\/docs\//] })).toBe("not_included");
  });
});

describe("TrapGuard", () => {
  it("ends a calendar's chain of next-month links, keeps numbered pages found on a listing", () => {
    const g = new TrapGuard();
    let from = "http://x.test/calendar/2024/1";
    expect(g.check(from, "http://x.test/")).toBeNull();
    let hops = 0;
    for (let m = 2; m < 100; m++) {
      const next = `http://x.test/calendar/${2024 + Math.floor(m / 12)}/${m % 12}`;
      if (g.check(next, from)) break;
      from = next;
      hops++;
    }
    expect(hops).toBe(8);
    for (let i = 0; i < 3000; i++) expect(g.check(`http://x.test/item/${i}`, "http://x.test/list")).toBeNull();
    // A tree of numbered pages, each linking to its ten children: all of it.
    for (let i = 1; i < 3000; i++) expect(g.check(`http://x.test/p/${i}`, `http://x.test/p/${Math.floor((i - 1) / 10)}`)).toBeNull();
  });
  it("caps query strings on one path, deep paths and repeated segments", () => {
    const g = new TrapGuard();
    let refused = 0;
    for (let i = 0; i < 150; i++) if (g.check(`http://x.test/s?color=${i}`, "http://x.test/")) refused++;
    expect(refused).toBe(50);
    expect(g.check(`http://x.test/${"a/".repeat(3)}b`)).toBe("repeated_segment");
    expect(g.check(`http://x.test/${Array.from({ length: 13 }, (_, i) => `s${i}`).join("/")}`)).toBe("path_too_deep");
  });

  it("takes as frontier entries only URLs it let through, once a page recorded them", () => {
    const g = new TrapGuard();
    expect(g.check("http://x.test/a")).toBeNull();
    expect(g.inFrontier("http://x.test/a")).toBe(false);
    // "/b" never passed the guard: a page that names it does not make it known.
    g.recorded(["http://x.test/a", "http://x.test/b"]);
    expect(g.inFrontier("http://x.test/a")).toBe(true);
    expect(g.inFrontier("http://x.test/b")).toBe(false);
  });
});
