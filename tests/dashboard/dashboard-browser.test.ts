/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core) against a real
 * server: sign in, list, create (secret shown once), revoke with confirmation, usage, health,
 * every error message, keyboard use, phone width, and no console errors or CSP violations.
 * Screenshots go to tests/artifacts/dashboard/.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, ROOT } from "../helpers/server.ts";
import { startDashboardServer, type DashboardServer } from "./serve-with-dashboard.ts";

const CHROMIUM = "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`dashboard browser test skipped: ${CHROMIUM} is missing (apt-get install chromium)`);

const ARTIFACTS = join(ROOT, "tests/artifacts/dashboard");
const SECRET_RE = /^qry_[0-9a-f]{64}$/;
const REVOKED = "Your key was revoked or is unknown — sign in again.";

const mask = (secret: string) => `qry_${secret.slice(4, 8)}...${secret.slice(-4)}`;

describe.skipIf(!haveChromium)("dashboard in Chromium", () => {
  let server: DashboardServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: { id: string; key: string };
  let created = ""; // the secret made through the UI
  let phase = "start";
  /** Phases in which the page is expected to meet HTTP errors (Chromium logs each failed load). */
  const httpErrorPhases = new Set<string>();
  const consoleErrors: Array<{ phase: string; text: string }> = [];
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];

  // Dialog shots show the viewport: a full-page shot would cut the modal backdrop off at the fold.
  const shot = (name: string, fullPage = true) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage, animations: "disabled" });
  const api = (path: string, key: string, init: RequestInit = {}) =>
    fetch(server.url + path, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers ?? {}) } });
  const echo = (key: string) =>
    api("/v1/test/echo", key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "dashboard" }) });
  const alertText = () => page.locator("#error").innerText();
  const noticeText = () => page.locator("#notice").innerText();
  const stat = (label: string) => page.locator(".stat", { has: page.locator("dt", { hasText: new RegExp(`^${label}$`) }) }).locator("dd");

  async function signIn(p: Page, secret: string) {
    await p.locator("#signin-key").fill(secret);
    await p.locator("#signin-key").press("Enter");
  }

  async function domHolds(p: Page, secret: string): Promise<boolean> {
    const html = await p.content();
    const values = await p.evaluate(() => {
      const fields = [...document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>("input, textarea")].map((e) => e.value);
      const stores = [sessionStorage, localStorage].flatMap((s) => Object.keys(s).map((k) => s.getItem(k) ?? ""));
      return [...fields, ...stores, document.body.innerText, document.cookie].join("\n");
    });
    return html.includes(secret) || values.includes(secret);
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // "starter" gets 3 requests a minute, so one account can show the rate-limit message.
    server = await startDashboardServer({ QUARRY_PLANS: JSON.stringify({ starter: { per_minute: 3 } }) });
    admin = createKeyCli(server.env, "acme", "search,research,scrape,keys");
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-US", timezoneId: "UTC" });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await context.exposeBinding("__reportCsp", (_src, v: string) => void cspViolations.push(v));
    await context.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (e) => {
        (window as unknown as { __reportCsp(v: string): void }).__reportCsp(`${e.violatedDirective} ${e.blockedURI}`);
      });
    });
    page = await context.newPage();
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push({ phase, text: m.text() });
    });
    page.on("pageerror", (e) => pageErrors.push(e.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("serves the sign-in page under the strict CSP", async () => {
    phase = "signin";
    const res = await page.goto(`${server.url}/dashboard`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()["content-security-policy"]).toContain("script-src 'self'");
    await expect.poll(() => page.locator("#view-signin").isVisible()).toBe(true);
    expect(await page.locator("#nav").isVisible()).toBe(false);
    expect(await page.title()).toBe("Sign in · Quarry dashboard");
    // Every field has a label; every button a name.
    const unlabeled = await page.evaluate(() => [
      ...[...document.querySelectorAll<HTMLInputElement>("input, textarea")].filter((e) => !e.labels?.length && !e.getAttribute("aria-label")).map((e) => e.id),
      ...[...document.querySelectorAll("button")].filter((b) => !(b.getAttribute("aria-label") || b.textContent?.trim())).map((b) => b.id),
    ]);
    expect(unlabeled).toEqual([]);
    await shot("01-signin");
  });

  it("explains a malformed key and an unknown key, and keeps neither", async () => {
    phase = "bad-key";
    httpErrorPhases.add(phase);
    await signIn(page, "not-a-key");
    await expect.poll(alertText).toContain("isn't a Quarry API key");
    await signIn(page, `qry_${"0".repeat(64)}`);
    await expect.poll(alertText).toBe(REVOKED);
    expect(await page.locator("#signin-key").getAttribute("aria-invalid")).toBe("true");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.locator("#view-signin").isVisible()).toBe(true);
    await shot("02-signin-bad-key");
  });

  it("signs in with the keyboard (Enter) and lists the account's keys", async () => {
    phase = "keys";
    await page.locator("#signin-key").fill(admin.key);
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#keys-body tr").count()).toBe(1);
    const row = page.locator("#keys-body tr").first();
    expect(await row.locator("code").innerText()).toBe(mask(admin.key));
    expect(await row.innerText()).toContain("signed in");
    expect(await page.locator("#who-key").innerText()).toBe(mask(admin.key));
    expect(await page.locator("#nav a[aria-current=page]").innerText()).toBe("Keys");
    // The key lives in this tab's sessionStorage only: not in the field, localStorage or a cookie.
    expect(await page.evaluate(() => ({ s: Object.values(sessionStorage), l: localStorage.length, c: document.cookie })))
      .toEqual({ s: [admin.key], l: 0, c: "" });
    expect(await page.locator("#signin-key").inputValue()).toBe("");
    // Own scopes only (all four here).
    expect(await page.locator("#create-scopes input").evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value)))
      .toEqual(["search", "research", "scrape", "keys"]);
    // Keyboard focus is visible.
    await page.locator("#create-name").focus();
    await page.keyboard.press("Tab");
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).toBe("solid");
  });

  it("creates a key and shows its secret exactly once", async () => {
    phase = "create";
    await page.locator("#create-name").fill("ci <b>bot</b>");
    await page.getByRole("checkbox", { name: /^search/ }).check();
    await page.getByRole("button", { name: "Create key" }).click();
    const dialog = page.getByRole("dialog", { name: "Your new key" });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    created = await page.locator("#secret-value").inputValue();
    expect(created).toMatch(SECRET_RE);
    expect(await dialog.innerText()).toMatch(/won't be shown again/);
    await page.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => page.locator("#secret-copied").innerText()).toBe("Copied to the clipboard.");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(created);
    await shot("03-keys-new-secret", false);

    await page.getByRole("button", { name: /I've saved it/ }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    await expect.poll(() => page.locator("#keys-body tr").count()).toBe(2);
    expect(await domHolds(page, created)).toBe(false);
    // Listed masked; the name is text, never markup.
    const row = page.locator("#keys-body tr", { hasText: "ci <b>bot</b>" });
    expect(await row.locator("code").innerText()).toBe(mask(created));
    expect(await row.locator("b").count()).toBe(0);
    expect(await noticeText()).toBe("Key “ci <b>bot</b>” created.");

    await page.reload();
    await expect.poll(() => page.locator("#keys-body tr").count()).toBe(2);
    expect(await domHolds(page, created)).toBe(false);
    await shot("04-keys");
  });

  it("the new secret works against the API", async () => {
    const res = await api("/v1/usage", created);
    expect(res.status).toBe(200);
    expect((await res.json()).plan).toBe("free");
  });

  it("revokes a key only after confirmation", async () => {
    phase = "revoke";
    const row = page.locator("#keys-body tr", { hasText: "ci <b>bot</b>" });
    await row.getByRole("button", { name: "Revoke key ci <b>bot</b>" }).click();
    const dialog = page.getByRole("dialog", { name: "Revoke this key?" });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await dialog.innerText()).toContain(mask(created));
    // Focus starts on Cancel; Esc backs out.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("revoke-cancel");
    await page.keyboard.press("Escape");
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await page.locator("#keys-body tr").count()).toBe(2);
    expect((await api("/v1/usage", created)).status).toBe(200);

    await row.getByRole("button", { name: /^Revoke key/ }).click();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await shot("05-keys-revoke-confirm", false);
    await dialog.getByRole("button", { name: "Revoke key" }).click();
    await expect.poll(() => page.locator("#keys-body tr").count()).toBe(1);
    expect(await noticeText()).toBe("Key “ci <b>bot</b>” revoked.");
    const after = await api("/v1/usage", created);
    expect(after.status).toBe(401);
    expect((await after.json()).error.code).toBe("invalid_key");
  });

  it("shows usage, and it moves with requests", async () => {
    phase = "usage";
    await page.getByRole("link", { name: "Usage" }).click();
    await expect.poll(() => stat("Plan").innerText()).toBe("Free");
    const before = Number((await stat("Used").innerText()).replace(/,/g, ""));
    for (let i = 0; i < 3; i++) expect((await echo(admin.key)).status).toBe(200);
    await page.getByRole("button", { name: "Refresh" }).click();
    await expect.poll(async () => Number((await stat("Used").innerText()).replace(/,/g, ""))).toBe(before + 3);
    expect(await stat("Monthly quota").innerText()).toBe("1,000");
    expect(await stat("Remaining").innerText()).toBe(String(1000 - before - 3));
    expect(await stat("Per-minute limit").innerText()).toBe("60 / min");
    expect(await stat("Resets").innerText()).toMatch(/^[A-Z][a-z]{2} 1, \d{4}\n12:00\sAM$/);
    const groups = await page.locator("#usage-groups li").evaluateAll((lis) =>
      Object.fromEntries(lis.map((li) => [li.querySelector(".bar-name")!.textContent, li.querySelector(".bar-count")!.textContent])));
    expect(groups).toEqual({ search: String(before + 3), video: "0", research: "0", social: "0", scrape: "0", crawl: "0" });
    expect(await page.locator("#usage-groups svg.bar").count()).toBe(6);
    expect(await page.locator("#usage-meter").innerText()).toContain(`${before + 3} of 1,000 requests used this month`);
    await shot("06-usage");
  });

  it("draws requests per day as a chart, by key side by side and by group, with the same figures in a table", async () => {
    phase = "daily";
    // A second key of the account with its own use, so the keys stand side by side.
    const bot = createKeyCli(server.env, "acme", "search");
    for (let i = 0; i < 2; i++) expect((await echo(bot.key)).status).toBe(200);
    const api24 = await (await api("/v1/usage/daily", admin.key)).json();
    const today = new Date().toISOString().slice(0, 10);
    const adminToday = api24.key.daily.at(-1).used;
    expect(adminToday).toBeGreaterThan(0);
    await page.getByRole("button", { name: "Refresh" }).click();
    await expect.poll(() => page.locator("#daily-legend li").count()).toBe(2);

    // The chart is one image with a summary sentence; each day a group with its tooltip.
    const chart = page.getByRole("img", { name: /^Chart: / });
    expect(await chart.count()).toBe(1);
    const total = adminToday + 2;
    expect(await chart.getAttribute("aria-label")).toContain(`${total} requests counted for your 2 keys`);
    expect(await page.locator("#daily-summary").innerText()).toContain(`the busiest day was`);
    expect(await page.locator("svg.chart g.day").count()).toBe(api24.days.length);
    const bar = page.locator(`svg.chart g.day[data-date="${today}"]`);
    expect(await bar.locator("rect.s0, rect.s1").count()).toBe(2); // two keys stacked
    expect(await bar.locator("title").textContent()).toContain(`: ${total} (`);
    const legend = await page.locator("#daily-legend li").allTextContents();
    expect(legend.some((l) => l.includes(mask(bot.key)) && l.endsWith(" 2"))).toBe(true);
    expect(legend.some((l) => l.includes(`${mask(admin.key)}), signed in`))).toBe(true);

    // The table: closed by default, opened with the keyboard; a row per day, a column per key, totals.
    const table = page.locator("#daily-table");
    expect(await table.isVisible()).toBe(false);
    await page.locator(".daily-data summary").focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => table.isVisible()).toBe(true);
    expect(await table.locator("tbody tr").count()).toBe(api24.days.length);
    const headers = await table.locator("thead th").allInnerTexts();
    expect(headers[0]).toBe("Day");
    expect(headers.at(-1)).toBe("Total");
    expect(headers).toHaveLength(4);
    expect(await table.locator("tbody tr").last().locator("td").last().innerText()).toBe(String(total));
    expect(await table.locator("tfoot td").last().innerText()).toBe(String(api24.keys.reduce((a: number, k: { used: number }) => a + k.used, 0)));
    await shot("06b-usage-daily-by-key");

    // By operation group: the signed-in key's groups, picked with the keyboard.
    expect(await page.getByRole("button", { name: "By key" }).getAttribute("aria-pressed")).toBe("true");
    await page.getByRole("button", { name: /By operation group/ }).focus();
    await page.keyboard.press("Space");
    await expect.poll(() => page.getByRole("button", { name: /By operation group/ }).getAttribute("aria-pressed")).toBe("true");
    expect(await page.getByRole("button", { name: "By key" }).getAttribute("aria-pressed")).toBe("false");
    await expect.poll(() => page.locator("#daily-legend li").count()).toBe(6);
    expect(await table.locator("thead th").allInnerTexts()).toEqual(["Day", "search", "video", "research", "social", "scrape", "crawl", "Total"]);
    expect(await table.locator("tbody tr").last().locator("td").first().innerText()).toBe(String(api24.key.daily.at(-1).groups.search));
    expect(await chart.getAttribute("aria-label")).toContain(`requests counted for this key`);
    await shot("06c-usage-daily-by-group");
    await page.getByRole("button", { name: "By key" }).click();
    await page.locator(".daily-data summary").click();
    // The extra key would show in later lists of narrower keys: it goes again.
    expect((await api(`/v1/keys/${bot.id}`, admin.key, { method: "DELETE" })).status).toBe(200);
  });

  it("shows each collection with its documents, passages and size, as GET /v1/collections has them", async () => {
    phase = "collections";
    const post = (path: string, body: unknown) => api(path, admin.key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await post("/v1/collections", { name: "handbook", description: "Operations handbook" })).status).toBe(201);
    expect((await post("/v1/collections", { name: "empty-one" })).status).toBe(201);
    const text = (i: number) => `# Part ${i}\n\n${"The operations handbook explains how the on-call rota works and who to page. ".repeat(40)}`;
    expect((await post("/v1/collections/handbook/documents", { documents: [1, 2, 3].map((i) => ({ id: `part-${i}`, markdown: text(i) })) })).status).toBe(200);
    const listed = (await (await api("/v1/collections", admin.key)).json()).collections as Array<{ name: string; documents: number; passages: number; bytes: number }>;
    const handbook = listed.find((c) => c.name === "handbook")!;
    expect(handbook.documents).toBe(3);
    expect(handbook.bytes).toBeGreaterThan(9_000);
    await page.getByRole("link", { name: "Collections" }).click();
    await expect.poll(() => page.locator("#collections-body tr").count()).toBe(2);
    const rows = await page.locator("#collections-body tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => (c as HTMLElement).innerText.trim())));
    const row = rows.find((r) => r[0]!.startsWith("handbook"))!;
    expect(row.slice(0, 4)).toEqual([`handbook Operations handbook`, "3", String(handbook.passages), `${(handbook.bytes / 1000).toFixed(1)} kB`]);
    expect(rows.find((r) => r[0] === "empty-one")!.slice(1, 4)).toEqual(["0", "0", "0 B"]);
    expect(await page.locator("#collections-count").innerText()).toBe(`2 collections, 3 documents, ${(handbook.bytes / 1000).toFixed(1)} kB of text in all.`);
    await shot("07-collections");
  });

  it("shows health at a glance", async () => {
    phase = "health";
    await page.getByRole("link", { name: "Health" }).click();
    await expect.poll(() => page.locator("#health-banner").innerText()).toContain("All systems operational");
    const services = await page.locator("#health-services li").evaluateAll((lis) =>
      Object.fromEntries(lis.map((li) => [li.querySelector("h2")!.textContent, li.querySelector(".badge")!.textContent!.replace(/^\W+/, "")])));
    // The browser is as this machine has it (ok with a Chromium, disabled without).
    const health = await (await fetch(`${server.url}/health`)).json();
    expect(services).toEqual({ database: "ok", limits: "ok", cache: "ok", metasearch: "disabled", intelligence: "ok", browser: health.services.browser.status });
    expect(await page.locator("#health-meta").innerText()).toMatch(/^Version 0\.0\.0-test · up \d+/);
    // The backends table mirrors /health (which backends exist depends on the configuration).
    const shown = await page.locator("#health-backends tbody tr").evaluateAll((trs) =>
      Object.fromEntries(trs.map((tr) => [tr.querySelector("th")!.textContent, tr.querySelector(".badge")!.textContent!.replace(/^\W+/, "")])));
    expect(shown).toEqual(Object.fromEntries(Object.entries(health.backends as Record<string, { status: string }>).map(([n, b]) => [n, b.status])));
    if (!Object.keys(shown).length) expect(await page.locator("#health-backends").innerText()).toContain("No search backend has served traffic yet.");
    await shot("07-health");
  });

  it("renders at phone width without horizontal scrolling", async () => {
    phase = "mobile";
    await page.setViewportSize({ width: 390, height: 844 });
    for (const view of ["keys", "usage", "collections", "health"]) {
      await page.goto(`${server.url}/dashboard#/${view}`);
      await expect.poll(() => page.locator(`#view-${view}`).getAttribute("aria-busy")).toBe(null);
      await expect.poll(() => page.locator(`#view-${view}`).isVisible()).toBe(true);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, `${view} scrolls sideways`).toBeLessThanOrEqual(0);
    }
    await page.goto(`${server.url}/dashboard#/keys`);
    await expect.poll(() => page.locator("#keys-body tr").count()).toBe(1);
    await shot("08-keys-mobile");
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto(`${server.url}/dashboard#/health`);
    await expect.poll(() => page.locator("#health-banner").innerText()).toContain("All systems operational");
    await shot("10-health-mobile-dark");
    await page.emulateMedia({ colorScheme: "light" });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("turns every API error into a clear message", async () => {
    phase = "errors";
    httpErrorPhases.add(phase);
    await page.goto(`${server.url}/dashboard#/usage`);
    await expect.poll(() => stat("Plan").innerText()).toBe("Free");
    const refresh = () => page.getByRole("button", { name: "Refresh" }).click();
    const fake = async (status: number, body: unknown, headers: Record<string, string> = {}) => {
      await page.route("**/v1/usage", (r) => r.fulfill({ status, contentType: "application/json", headers, body: JSON.stringify(body) }), { times: 1 });
      await refresh();
    };
    const err = (code: string, message: string, extra: object = {}) => ({ error: { code, message, request_id: "req_01M80RNZXH0H3WED83100W9EQD", ...extra } });

    await fake(429, err("quota_exceeded", "Monthly quota of 1000 requests exhausted; it resets at 2026-12-01T00:00:00Z. Upgrade the plan for more."),
      { "X-RateLimit-Reset": "2026-12-01T00:00:00Z" });
    await expect.poll(alertText).toMatch(/^This key's monthly quota is used up — it resets on Dec 1, 2026, 12:00\sAM\.$/);
    await fake(429, err("rate_limited", "Rate limit exceeded.", { retry_after: 17 }), { "Retry-After": "17" });
    await expect.poll(alertText).toBe("Too many requests — try again in 17 s.");
    await fake(429, err("rate_limited", "Too many requests from this address."), { "Retry-After": "2" });
    await expect.poll(alertText).toBe("Too many requests — try again in 2 s.");
    await fake(403, err("insufficient_scope", "This key lacks the \"keys\" scope required by GET /v1/keys."));
    await expect.poll(alertText).toBe("Your key isn't allowed to do that: This key lacks the \"keys\" scope required by GET /v1/keys.");
    await fake(503, err("service_unavailable", "The database is unreachable; try again shortly."));
    await expect.poll(alertText).toBe("The service is temporarily unavailable — try again in a moment. (request req_01M80RNZXH0H3WED83100W9EQD)");
    await fake(500, err("internal_error", "Internal error."));
    await expect.poll(alertText).toBe("Something went wrong on the server — try again. (request req_01M80RNZXH0H3WED83100W9EQD)");
    await page.route("**/v1/usage", (r) => r.abort("internetdisconnected"), { times: 1 });
    await refresh();
    await expect.poll(alertText).toBe("Can't reach the Quarry service — check your connection and try again.");
    // None of these signed the tab out.
    expect(await page.evaluate(() => sessionStorage.length)).toBe(1);
    await refresh();
    await expect.poll(noticeText).toBe("Updated.");
    expect(await alertText()).toBe("");
  });

  it("shows the real rate-limit message, with the retry time", async () => {
    phase = "rate-limit";
    httpErrorPhases.add(phase);
    const tight = createKeyCli(server.env, "tight", "search,keys", "starter"); // 3 requests a minute
    const tab = await context.newPage();
    tab.on("console", (m) => m.type() === "error" && consoleErrors.push({ phase, text: m.text() }));
    tab.on("pageerror", (e) => pageErrors.push(e.message));
    await tab.goto(`${server.url}/dashboard#/usage`);
    // A new tab has its own sessionStorage: it starts signed out.
    await expect.poll(() => tab.locator("#view-signin").isVisible()).toBe(true);
    await signIn(tab, tight.key); // 1: GET /v1/keys, then 2 and 3: GET /v1/usage and /v1/usage/daily
    await expect.poll(() => tab.locator("#usage-stats dd").first().innerText()).toBe("Starter");
    await tab.getByRole("button", { name: "Refresh" }).click(); // 4 and 5: over the limit
    await expect.poll(() => tab.locator("#error").innerText()).toMatch(/^Too many requests — try again in \d+ s\.$/);
    const seconds = Number(/in (\d+) s/.exec(await tab.locator("#error").innerText())![1]);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(60);
    await tab.screenshot({ path: join(ARTIFACTS, "09-usage-rate-limited.png"), fullPage: true, animations: "disabled" });
    await tab.close();
  });

  it("offers only the signed-in key's scopes, and a key revoked elsewhere signs the tab out", async () => {
    phase = "revoked-elsewhere";
    httpErrorPhases.add(phase);
    const narrow = createKeyCli(server.env, "acme", "search,keys");
    await page.getByRole("button", { name: "Sign out" }).click();
    expect(await noticeText()).toBe("Signed out: the key was removed from this tab.");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.goto(`${server.url}/dashboard#/keys`);
    await signIn(page, narrow.key);
    // Only keys within its own scopes are listed: the full-scope admin key is not, so it cannot be revoked from here.
    await expect.poll(() => page.locator("#keys-body tr").count()).toBe(1);
    expect(await page.locator("#keys-body").innerText()).toContain(mask(narrow.key));
    expect(await page.locator("#keys-body").innerText()).not.toContain(mask(admin.key));
    expect(await page.locator("#keys-count").innerText()).toBe("1 active key within this key's scopes");
    expect(await page.locator("#create-scopes input").evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value)))
      .toEqual(["search", "keys"]);
    // Someone else revokes it; the next call signs the tab out with the message.
    expect((await api(`/v1/keys/${narrow.id}`, admin.key, { method: "DELETE" })).status).toBe(200);
    await page.getByRole("link", { name: "Usage" }).click();
    await expect.poll(alertText).toBe(REVOKED);
    expect(await page.locator("#view-signin").isVisible()).toBe(true);
    expect(await page.locator("#nav").isVisible()).toBe(false);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("signin-title");
  });

  it("a key without the keys scope is told why it cannot sign in", async () => {
    phase = "no-keys-scope";
    httpErrorPhases.add(phase);
    const searchOnly = createKeyCli(server.env, "acme", "search");
    await signIn(page, searchOnly.key);
    await expect.poll(alertText).toBe("This key can't manage keys — sign in with a key that has the “keys” scope.");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  it("logged no console errors and no CSP violations", async () => {
    // The listener works: an inline script is refused and reported.
    const before = cspViolations.length;
    expect(before, cspViolations.join("\n")).toBe(0);
    expect(pageErrors).toEqual([]);
    // Chromium logs every 4xx/5xx or aborted load as a console error; only the error phases may have them.
    const unexpected = consoleErrors.filter((e) => !(httpErrorPhases.has(e.phase) && /^Failed to load resource: /.test(e.text)));
    expect(unexpected).toEqual([]);
    await page.evaluate(() => {
      const s = document.createElement("script");
      s.textContent = "window.__inline = 1";
      document.body.append(s);
    });
    await expect.poll(() => cspViolations.length).toBe(1);
    expect(cspViolations[0]).toMatch(/^script-src/);
    expect(await page.evaluate(() => (window as unknown as { __inline?: number }).__inline)).toBeUndefined();
  });

  it("the server logged no secret", () => {
    const log = server.logger.text();
    expect(log).not.toMatch(/qry_[0-9a-f]{64}/);
  });
});
