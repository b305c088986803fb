/**
 * POST /v1/scrape when a site blocks Quarry (issue #32, api.md §12), in process on SQLite, with
 * real parts: a site that answers reads from 127.0.0.1 with a Cloudflare challenge and reads from
 * 127.0.0.3 with the page, and real forward proxies on loopback that connect out from 127.0.0.3.
 * No browser here (its step is skipped and says so; tests/render/blocked-render.test.ts has one).
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RenderPort } from "../../core/ports.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { fixturePath } from "../helpers/articles.ts";
import { startHttpProxy, startWalledSite, type TestProxy } from "../helpers/forward-proxy.ts";

const CHALLENGE = readFileSync(fixturePath("blocks/cloudflare-challenge.html"), "utf8");
const CAPTCHA = readFileSync(fixturePath("blocks/recaptcha.html"), "utf8");
const ARTICLE = (n: number) => `<!doctype html><html lang="en"><head><title>Page ${n}</title></head><body><article><h1>Page ${n}</h1><p>${"This page has real words in it, enough of them to be read as the main content of the page. ".repeat(4)}</p></article></body></html>`;

/** No browser on this server: the render step is skipped. */
const noBrowser: RenderPort = {
  render: async () => { throw new Error("no browser"); },
  health: () => ({ status: "disabled", pages_in_use: 0, max_pages: 0 }),
};

describe("scrape past bot walls", () => {
  let site: Awaited<ReturnType<typeof startWalledSite>>;
  let captcha: Awaited<ReturnType<typeof startWalledSite>>;
  let de: TestProxy, us: TestProxy;
  let t: TestApp;
  let key: string;
  const scrape = (json: Record<string, unknown>) => t.request("/v1/scrape", { method: "POST", key, json: { max_age_ms: 0, ...json } });
  const used = async () => (await (await t.request("/v1/usage", { key })).json()).used as number;

  beforeAll(async () => {
    site = await startWalledSite({ "/a": ARTICLE(1), "/b": ARTICLE(2), "/c": ARTICLE(3) }, { status: 403, body: CHALLENGE });
    // Walls every reader, proxied or not: a captcha page nothing gets past.
    captcha = await startWalledSite({}, { status: 429, body: CAPTCHA }, { everyone: true });
    [de, us] = await Promise.all([startHttpProxy({ auth: "de-user:de-secret-pw" }), startHttpProxy()]);
    t = await makeApp({
      storage: "sqlite",
      render: noBrowser,
      env: {
        QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
        QUARRY_PROXIES: `de:residential=${de.url}, us=${us.url}`,
      },
    });
    key = (await t.key("acme", ["scrape"])).secret;
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([site?.close(), captcha?.close(), de?.kill(), us?.kill()]);
  });

  it("a challenge is escalated to a proxy; the page comes back with the path taken, for one unit", async () => {
    const before = await used();
    const res = await scrape({ url: `${site.url}/a` });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.data.title).toBe("Page 1");
    expect(body.data.markdown).toContain("real words");
    expect(body.data.markdown).not.toMatch(/just a moment/i);
    expect(body.meta.status_code).toBe(200);
    expect(body.meta.fetch_path).toHaveLength(3);
    expect(body.meta.fetch_path[0]).toBe("static: 403 cloudflare challenge");
    expect(body.meta.fetch_path[1]).toBe("render: skipped (no browser)");
    expect(body.meta.fetch_path[2]).toMatch(/^proxy (de:residential|us) http:\/\/127\.0\.0\.1:\d+: ok$/);
    expect(JSON.stringify(body)).not.toContain("de-secret-pw");
    expect(await used()).toBe(before + 1);
    expect(site.reads.direct).toBe(1);
  });

  it("the next read of the host starts at the step that worked, and successive reads rotate proxies", async () => {
    const direct = site.reads.direct;
    const vias = [];
    for (const path of ["/b", "/c"]) {
      const body = await (await scrape({ url: `${site.url}${path}` })).json();
      expect(body.meta.fetch_path[0]).toBe(`proxy: remembered for 127.0.0.1:${site.port}`);
      expect(body.meta.fetch_path[1]).toMatch(/^proxy .*: ok$/);
      vias.push(body.meta.fetch_path[1]);
    }
    expect(site.reads.direct).toBe(direct);
    expect(vias[0]).not.toBe(vias[1]);
    // The memory is in the storage, shared with any instance on it.
    expect(await t.ports.hosts!.get(`127.0.0.1:${site.port}`)).toMatchObject({ step: "proxy" });
  });

  it("the memory expires: after QUARRY_ESCALATION_TTL the host is read statically first again", async () => {
    await t.clock.advance(3_600_001);
    const body = await (await scrape({ url: `${site.url}/a` })).json();
    expect(body.meta.fetch_path[0]).toBe("static: 403 cloudflare challenge");
  });

  it("location picks a proxy of that country and sends Accept-Language; a country without one is said so", async () => {
    const de1 = de.asked.length;
    const body = await (await scrape({ url: `${site.url}/a`, location: { country: "DE", languages: ["de-AT", "de"] } })).json();
    expect(body.meta.fetch_path).toEqual([`proxy de:residential http://127.0.0.1:${de.port}: ok`]);
    expect(de.asked.length).toBe(de1 + 1);
    expect(site.reads.languages.at(-1)).toBe("de-AT, de;q=0.9");
    expect(body.meta.location_note).toBeUndefined();
    const fr = await (await scrape({ url: `${site.url}/b`, location: { country: "fr" } })).json();
    expect(fr.meta.location_note).toMatch(/No proxy is tagged with country fr/);
    expect(fr.meta.fetch_path.at(-1)).toMatch(/: ok$/);
  });

  it("proxy: a pool name reads through that pool only; an unknown pool is a 400 before anything is read", async () => {
    const body = await (await scrape({ url: `${site.url}/c`, proxy: "residential" })).json();
    expect(body.meta.fetch_path).toEqual([`proxy de:residential http://127.0.0.1:${de.port}: ok`]);
    const bad = await scrape({ url: `${site.url}/c`, proxy: "nope" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/pools: residential, default/);
  });

  it('proxy "none": the wall is `blocked`, free, and never passed off as the page', async () => {
    const before = await used();
    const res = await scrape({ url: `${site.url}/a`, proxy: "none" });
    expect(res.status).toBe(502);
    const { error } = await res.json();
    expect(error.code).toBe("blocked");
    expect(error.blocked_by).toBe("cloudflare");
    expect(error.fetch_path).toEqual(["static: 403 cloudflare challenge", "render: skipped (no browser)"]);
    expect(error.message).toMatch(/try proxy "auto"/);
    expect(JSON.stringify(error)).not.toMatch(/_cf_chl_opt/);
    expect(await used()).toBe(before);
  });

  it('render "never" is kept past a wall: the browser step is skipped and says why', async () => {
    const { error } = await (await scrape({ url: `${site.url}/a`, proxy: "none", render: "never" })).json();
    expect(error.fetch_path).toEqual(["static: 403 cloudflare challenge", 'render: skipped (render is "never")']);
  });

  it("a captcha page that walls the proxies too: `blocked` after every step, free", async () => {
    const before = await used();
    const res = await scrape({ url: `${captcha.url}/form` });
    expect(res.status).toBe(502);
    const { error } = await res.json();
    expect(error.code).toBe("blocked");
    expect(error.blocked_by).toBe("recaptcha");
    expect(error.fetch_path[0]).toBe("static: 429 recaptcha captcha");
    expect(error.fetch_path.at(-1)).toMatch(/^proxy .*: 429 recaptcha captcha$/);
    expect(captcha.reads.proxied).toBe(1);
    expect(await used()).toBe(before);
  });

  it("Firecrawl's proxy and location map onto Quarry's: basic reads without a proxy (blocked), enhanced escalates, location picks the country", async () => {
    const fc = (json: Record<string, unknown>) => t.request("/compat/firecrawl/v2/scrape", { method: "POST", key, json: { maxAge: 0, ...json } });
    const basic = await fc({ url: `${site.url}/a`, proxy: "basic" });
    expect(basic.status).toBe(502);
    expect(JSON.stringify(await basic.json())).toMatch(/bot wall/);
    const enhanced = await (await fc({ url: `${site.url}/b`, proxy: "enhanced" })).json();
    expect(enhanced.success).toBe(true);
    expect(enhanced.data.markdown).toContain("real words");
    expect(enhanced.quarry.meta.fetch_path.at(-1)).toMatch(/^proxy .*: ok$/);
    expect(enhanced.quarry.ignored).toEqual([]);
    const located = await (await fc({ url: `${site.url}/c`, location: { country: "DE", languages: ["de-DE"] } })).json();
    expect(located.quarry.meta.fetch_path).toEqual([`proxy de:residential http://127.0.0.1:${de.port}: ok`]);
    expect(site.reads.languages.at(-1)).toBe("de-DE");
  });

  it("/health shows the proxies and their state, never their credentials", async () => {
    const res = await t.request("/health");
    const text = await res.text();
    const health = JSON.parse(text);
    expect(health.services.proxies).toMatchObject({ status: "ok", total: 2, paused: 0 });
    expect(health.services.proxies.detail.map((p: { label: string }) => p.label)).toEqual([`de:residential http://127.0.0.1:${de.port}`, `us http://127.0.0.1:${us.port}`]);
    expect(text).not.toContain("de-secret-pw");
    expect(text).not.toContain("de-user");
    expect(t.logger.text()).not.toContain("de-secret-pw");
  });
});
