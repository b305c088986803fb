/**
 * GET /docs in a real browser (Debian's Chromium through playwright-core) against a real server:
 * the reference renders every operation from the live OpenAPI document, with nothing fetched
 * from anywhere but the server itself and no CSP violation.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, startServer, tempDataDir, type Server } from "../helpers/server.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(ROOT, "tests/artifacts/docs");

describe.skipIf(!existsSync(CHROMIUM))("the API reference at /docs", () => {
  let server: Server;
  let browser: Browser;
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startServer("node", { QUARRY_DATA_DIR: tempDataDir(), QUARRY_IP_RATE: "off" });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("renders every operation from /openapi.json, served entirely by Quarry, within its CSP", async () => {
    const page = await browser.newPage();
    const foreign: string[] = [];
    const problems: string[] = [];
    page.on("request", (req) => {
      const url = req.url();
      if (!url.startsWith(server.url) && !url.startsWith("data:")) foreign.push(url);
    });
    page.on("console", (msg) => {
      if (msg.type() === "error" || /Content Security Policy/i.test(msg.text())) problems.push(msg.text());
    });
    page.on("pageerror", (err) => problems.push(err.message));
    const res = await page.goto(`${server.url}/docs`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()["content-security-policy"]).toContain("script-src 'self'");
    const doc = await (await fetch(`${server.url}/openapi.json`)).json();
    const operations = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) => Object.values(p));
    await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
    expect(await page.locator(".opblock").count()).toBe(operations.length);
    const shownIds = await page.locator(".opblock-summary-operation-id").allInnerTexts();
    expect(shownIds.map((s) => s.trim()).sort()).toEqual(operations.map((o) => o.operationId).sort());
    await expect.poll(() => page.locator(".info .title").innerText()).toContain("Quarry");
    await page.screenshot({ path: join(ARTIFACTS, "docs.png"), fullPage: false });
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("serves the page's assets from this server, cacheable, and links back to the dashboard", async () => {
    const css = await fetch(`${server.url}/docs/swagger-ui.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toContain("text/css");
    expect(css.headers.get("cache-control")).toContain("max-age");
    const html = await (await fetch(`${server.url}/docs`)).text();
    expect(html).toContain('href="/dashboard"');
    expect(html).not.toMatch(/https?:\/\//);
  });
});
