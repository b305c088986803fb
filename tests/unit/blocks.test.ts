/**
 * Block detection (core/net/blocks.ts, api.md §12): one fixture per bot wall, each a minimal page
 * modelled on what the vendor serves to scripted clients (tests/fixtures/blocks/, written for
 * Quarry). A block needs both a blocking status and a marker: the same wall with a 200, and a
 * plain 403 or an article about captchas served with a 403, are pages.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BLOCK_MARKERS, detectBlock, describeBlock } from "../../core/net/blocks.ts";
import { Blocked, siteUnreachable } from "../../core/net/fetch-errors.ts";
import { ERROR_STATUS, REFUSALS } from "../../core/errors.ts";
import { fixturePath } from "../helpers/articles.ts";

const page = (name: string) => readFileSync(fixturePath(`blocks/${name}.html`));

const WALLS: Array<[fixture: string, status: number, vendor: string, kind: string, headers?: Record<string, string>]> = [
  ["cloudflare-challenge", 403, "cloudflare", "challenge"],
  ["cloudflare-challenge", 503, "cloudflare", "challenge"],
  ["cloudflare-header-only", 403, "cloudflare", "challenge", { "cf-mitigated": "challenge" }],
  ["cloudflare-blocked", 403, "cloudflare", "bot_wall"],
  ["akamai-denied", 403, "akamai", "bot_wall"],
  ["akamai-challenge", 403, "akamai", "challenge"],
  ["perimeterx", 403, "perimeterx", "captcha"],
  ["datadome", 403, "datadome", "captcha"],
  ["datadome-header-only", 403, "datadome", "bot_wall", { "x-datadome": "protected" }],
  ["imperva", 403, "imperva", "bot_wall"],
  ["aws-waf", 403, "aws_waf", "challenge"],
  ["plain-403", 403, "aws_waf", "challenge", { "x-amzn-waf-action": "captcha" }],
  ["sucuri", 403, "sucuri", "bot_wall"],
  ["plain-403", 403, "sucuri", "bot_wall", { "x-sucuri-block": "1" }],
  ["kasada", 429, "kasada", "challenge"],
  ["plain-403", 429, "vercel", "challenge", { "x-vercel-mitigated": "challenge" }],
  ["hcaptcha", 403, "hcaptcha", "captcha"],
  ["recaptcha", 429, "recaptcha", "captcha"],
  ["turnstile", 403, "turnstile", "captcha"],
];

describe("detectBlock", () => {
  it.each(WALLS)("%s with %i is a %s %s", (fixture, status, vendor, kind, headers) => {
    const block = detectBlock(status, new Headers(headers), page(fixture));
    expect(block).toEqual({ vendor, kind, status });
    // The same text works as a string (a rendered page's HTML).
    expect(detectBlock(status, new Headers(headers), page(fixture).toString("utf8"))).toEqual(block);
  });

  it("every marker in the list has a fixture above that matches it", () => {
    const seen = new Set<number>();
    for (const [fixture, status, , , headers] of WALLS) {
      const body = page(fixture).toString("latin1");
      BLOCK_MARKERS.forEach((m, i) => {
        const h = m.header && new Headers(headers).get(m.header.name);
        if ((h != null && (!m.header!.value || m.header!.value.test(h))) || (m.body && m.body.test(body) && status)) seen.add(i);
      });
    }
    expect([...BLOCK_MARKERS.keys()].filter((i) => !seen.has(i))).toEqual([]);
  });

  it("a wall served with 200 (or 404, 500) is the site's answer, not a block", () => {
    for (const status of [200, 404, 500]) expect(detectBlock(status, new Headers(), page("cloudflare-challenge"))).toBeNull();
    expect(detectBlock(200, new Headers({ "cf-mitigated": "challenge" }), "")).toBeNull();
  });

  it("a plain 403 page, and a 403 article that talks about captchas, are not blocks", () => {
    expect(detectBlock(403, new Headers({ server: "Apache" }), page("plain-403"))).toBeNull();
    expect(detectBlock(403, new Headers(), page("article-with-captcha-word"))).toBeNull();
    expect(detectBlock(503, new Headers({ "retry-after": "30" }), "<h1>Service Unavailable</h1>")).toBeNull();
  });

  it("looks only at the first 64 KiB: a big page with a widget at its end is a page", () => {
    const big = "<p>" + "x".repeat(70 * 1024) + '</p><div class="g-recaptcha"></div>';
    expect(detectBlock(403, new Headers(), big)).toBeNull();
    expect(detectBlock(403, new Headers(), new TextEncoder().encode(big))).toBeNull();
  });
});

describe("Blocked", () => {
  const block = detectBlock(403, new Headers(), page("cloudflare-challenge"))!;
  const err = new Blocked("https://shop.example/item", block, ["static: 403 cloudflare challenge", "render: skipped (no browser)"]);

  it("is the `blocked` error: free, with what blocked and what was tried", () => {
    expect(err.code).toBe("blocked");
    expect(err.status).toBe(ERROR_STATUS.blocked);
    expect(REFUSALS.has("blocked")).toBe(true);
    expect(err.message).toContain("shop.example");
    expect(err.message).toContain(describeBlock(block));
    expect(err.extra.fields).toEqual({ blocked_by: "cloudflare", fetch_path: ["static: 403 cloudflare challenge", "render: skipped (no browser)"] });
  });

  it("counts toward the host's streak as an unreachable site does", () => {
    expect(siteUnreachable(err)).toBe(true);
  });
});
