/**
 * What a page fetch must never reach, on both fetchers (Node: connect-time check; portable:
 * resolve-then-check over the global fetch). Every target is a server of this test on 127.0.0.1,
 * 127.0.0.2 or ::1, and each test asserts the refusal AND that the target saw no connection.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch } from "../../adapters/fetch/safe-fetch.ts";
import { createSafeFetchPortable } from "../../adapters/fetch/portable.ts";
import type { SafeFetch, SafeFetchOptions } from "../../adapters/fetch/types.ts";
import { parseAllowList } from "../../core/net/allow-list.ts";
import { EgressRefused, TooManyRedirects } from "../../core/net/fetch-errors.ts";
import { mapResolver, rejection, startServer, type TestServer } from "./helpers.ts";

let redirector: TestServer; // 127.0.0.1, the allowed first hop
let v4: TestServer; // 127.0.0.1, forbidden
let v6: TestServer; // ::1, forbidden
let v4b: TestServer; // 127.0.0.2, forbidden

const SECRET = (_: unknown, res: import("node:http").ServerResponse) => res.end("internal secret");

beforeAll(async () => {
  redirector = await startServer("127.0.0.1", (req, res) => {
    const url = new URL(req.url!, "http://x");
    const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
    if (chain) {
      const n = Number(chain[1]);
      if (n === 0) return res.end("end of chain");
      res.writeHead(302, { location: `/chain/${n - 1}` });
      return res.end();
    }
    if (url.pathname === "/to") {
      res.writeHead(Number(url.searchParams.get("status") ?? 302), { location: url.searchParams.get("u")! });
      return res.end();
    }
    res.end("redirector home");
  });
  v4 = await startServer("127.0.0.1", SECRET);
  v6 = await startServer("::1", SECRET);
  v4b = await startServer("127.0.0.2", SECRET);
});

afterAll(async () => {
  await Promise.all([redirector, v4, v6, v4b].map((s) => s?.close()));
});

const resolver = () =>
  mapResolver({
    "allowed.test": ["127.0.0.1"],
    "evil.test": ["127.0.0.1"],
    "evil6.test": ["::1"],
    "evil2.test": ["127.0.0.2"],
    "mixed.test": ["8.8.8.8", "127.0.0.1"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "odd.test": ["0x7f.1"],
    "nat64.test": ["64:ff9b::7f00:1"],
    "meta.test": ["169.254.169.254"],
  });

const VARIANTS: { name: string; make: (o: SafeFetchOptions) => SafeFetch }[] = [
  { name: "node", make: (o) => createSafeFetch(o) },
  { name: "portable", make: (o) => createSafeFetchPortable(o) },
];

function victimsUntouched(): void {
  expect(v4.connections + v6.connections + v4b.connections).toBe(0);
  expect([...v4.requests, ...v6.requests, ...v4b.requests]).toEqual([]);
}

describe.each(VARIANTS)("$name fetcher refuses", ({ make }) => {
  const literal = () => [
    `http://127.0.0.1:${v4.port}/`,
    `http://127.1:${v4.port}/`,
    `http://2130706433:${v4.port}/`,
    `http://0x7f000001:${v4.port}/`,
    `http://0177.0.0.1:${v4.port}/`,
    `http://0x7f.1:${v4.port}/`,
    `http://[::1]:${v6.port}/`,
    `http://[::ffff:127.0.0.1]:${v4.port}/`,
    `http://[::ffff:7f00:1]:${v4.port}/`,
    `http://0.0.0.0:${v4.port}/`,
    `http://0:${v4.port}/`,
    `http://127.0.0.2:${v4b.port}/`,
    `http://localhost:${v4.port}/`,
    `http://LOCALHOST.:${v6.port}/`,
    `http://app.localhost:${v4.port}/`,
    `https://127.0.0.1:${v4.port}/`,
  ];

  it("every loopback spelling as a literal host", async () => {
    const safe = make({ allow: parseAllowList(""), resolver: resolver() });
    for (const url of literal()) {
      const err = await rejection(() => safe.fetchPage(url));
      expect(err, url).toBeInstanceOf(EgressRefused);
      expect(err.status).toBe(422);
      expect(err.code).toBe("url_not_allowed");
    }
    victimsUntouched();
  });

  it.each([
    ["evil.test", () => v4.port, "loopback"],
    ["evil6.test", () => v6.port, "loopback"],
    ["evil2.test", () => v4b.port, "loopback"],
    ["mixed.test", () => v4.port, "loopback"],
    ["mapped.test", () => v4.port, "loopback"],
    ["odd.test", () => v4.port, "loopback"],
    ["nat64.test", () => v4.port, "loopback"],
    ["meta.test", () => v4.port, "link-local"],
  ])("a name resolving to a private address: %s", async (host, port, kind) => {
    const safe = make({ allow: parseAllowList(""), resolver: resolver() });
    for (const scheme of ["http", "https"]) {
      const err = await rejection(() => safe.fetchPage(`${scheme}://${host}:${port()}/path`));
      expect(err).toBeInstanceOf(EgressRefused);
      expect(err.message).toContain("does not resolve to a public address");
      expect(err.message).not.toContain(host); // one message for every refused target (#19)
      expect(err.internal).toContain(kind);
      expect(err.message).toContain("QUARRY_EGRESS_ALLOW");
      expect(err.message).not.toMatch(/127\.0\.0|::1|169\.254/);
    }
    victimsUntouched();
  });

  it.each(["file:///etc/passwd", "ftp://example.com/x", "data:text/html,<h1>hi</h1>", "javascript:alert(1)", "gopher://example.com/"])(
    "the scheme of %s",
    async (url) => {
      const safe = make({ allow: parseAllowList("127.0.0.0/8"), resolver: resolver() });
      const err = await rejection(() => safe.fetchPage(url));
      expect(err).toBeInstanceOf(EgressRefused);
      expect(err.reason).toBe("scheme");
    },
  );

  it("credentials in the URL, even to an allowed host", async () => {
    const safe = make({ allow: parseAllowList("127.0.0.1/32"), resolver: resolver() });
    const err = await rejection(() => safe.fetchPage(`http://user:pw@127.0.0.1:${v4.port}/`));
    expect(err).toMatchObject({ reason: "credentials", status: 422 });
    victimsUntouched();
  });

  it("through the FetchPort face too", async () => {
    const safe = make({ allow: parseAllowList(""), resolver: resolver() });
    await expect(safe(`http://evil.test:${v4.port}/`)).rejects.toBeInstanceOf(EgressRefused);
    await expect(safe(new Request(`http://[::1]:${v6.port}/`))).rejects.toBeInstanceOf(EgressRefused);
    await expect(safe(`http://u:p@127.0.0.1:${v4.port}/`)).rejects.toBeInstanceOf(EgressRefused);
    victimsUntouched();
  });
});

const CONFIGS = [
  { name: "node, first hop allowed by name", make: createSafeFetch, allow: "allowed.test", base: () => `http://allowed.test:${redirector.port}` },
  { name: "node, first hop allowed by CIDR", make: createSafeFetch, allow: "127.0.0.1/32", base: () => redirector.origin },
  { name: "portable, first hop allowed by CIDR", make: createSafeFetchPortable, allow: "127.0.0.1/32", base: () => redirector.origin },
];

describe.each(CONFIGS)("redirects ($name)", ({ make, allow, base }) => {
  const safe = () => make({ allow: parseAllowList(allow), resolver: resolver() });
  const forbidden = () => [
    `http://[::1]:${v6.port}/`,
    `http://127.0.0.2:${v4b.port}/`,
    `http://evil2.test:${v4b.port}/`,
    `http://evil6.test:${v6.port}/`,
    `http://localhost:${v4.port}/`,
    `http://0.0.0.0:${v4.port}/`,
    `http://[::ffff:127.0.0.2]:${v4b.port}/`,
    `https://evil6.test:${v6.port}/`,
    // Under the CIDR configs 127.0.0.1 itself is allowed, so these are only forbidden by name.
    ...(allow === "allowed.test" ? [`http://127.0.0.1:${v4.port}/`, `http://evil.test:${v4.port}/`, `http://mixed.test:${v4.port}/`] : []),
  ];

  it("the allowed page itself is fetched", async () => {
    const page = await safe().fetchPage(`${base()}/`);
    expect(new TextDecoder().decode(page.body)).toBe("redirector home");
  });

  it.each([301, 302, 303, 307, 308])("a %s from an allowed page into forbidden addresses is refused", async (status) => {
    for (const target of forbidden()) {
      const before = redirector.requests.length;
      const err = await rejection(() => safe().fetchPage(`${base()}/to?status=${status}&u=${encodeURIComponent(target)}`));
      expect(err, target).toBeInstanceOf(EgressRefused);
      expect(redirector.requests.length).toBe(before + 1);
    }
    victimsUntouched();
  });

  it.each(["file:///etc/passwd", "ftp://127.0.0.1/", "data:text/plain,x", "javascript:alert(1)", `http://u:p@127.0.0.1:1/`])(
    "a redirect to %s is refused",
    async (target) => {
      const err = await rejection(() => safe().fetchPage(`${base()}/to?u=${encodeURIComponent(target)}`));
      expect(err).toBeInstanceOf(EgressRefused);
    },
  );

  it("five redirects are followed, the sixth is refused", async () => {
    const page = await safe().fetchPage(`${base()}/chain/5`);
    expect(page.status).toBe(200);
    expect(page.redirects).toHaveLength(5);
    expect(page.finalUrl).toBe(`${base()}/chain/0`);
    const err = await rejection(() => safe().fetchPage(`${base()}/chain/6`));
    expect(err).toBeInstanceOf(TooManyRedirects);
    expect(err.status).toBe(502);
  });

  it("manual redirect mode hands back the 3xx unfollowed", async () => {
    const res = await safe()(`${base()}/to?u=${encodeURIComponent(`http://[::1]:${v6.port}/`)}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`http://[::1]:${v6.port}/`);
    victimsUntouched();
  });
});
