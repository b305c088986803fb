/**
 * The dashboard's health view names what makes the service degraded. A browser that cannot start
 * makes /health `degraded`, but the view listed only the database, cache, metasearch and
 * intelligence (all fine) and every backend (fine too): "Degraded: some optional parts are down"
 * with nothing shown down. It now shows the browser as /health reports it, with the reason.
 * A real `quarry serve` whose QUARRY_CHROMIUM_PATH cannot start a browser; the dashboard in Chromium.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

const CHROMIUM = "/usr/bin/chromium";

describe.skipIf(!existsSync(CHROMIUM))("dashboard health view", () => {
  let server: Server;
  let browser: Browser;
  let key: string;

  beforeAll(async () => {
    // /bin/false is an executable, so the server starts; the browser it names exits at once.
    const env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_CHROMIUM_PATH: "/bin/false", QUARRY_EGRESS_ALLOW: "127.0.0.1/32" };
    server = await startServer("node", env);
    key = createKeyCli(env, "acme", "scrape,keys").key;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const services = async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/dashboard`);
    await page.locator("#signin-key").fill(key);
    await page.locator("#signin-key").press("Enter");
    await page.getByRole("link", { name: "Health" }).click();
    await expect.poll(() => page.locator("#health-services li").count()).toBeGreaterThan(0);
    const shown = await page.locator("#health-services li").evaluateAll((lis) =>
      Object.fromEntries(lis.map((li) => [li.querySelector("h2")!.textContent, {
        status: li.querySelector(".badge")!.textContent!.replace(/^\W+/, ""),
        detail: li.querySelector("p")!.textContent,
      }])));
    const banner = await page.locator("#health-banner").innerText();
    await page.close();
    return { shown, banner };
  };

  it("shows the browser as /health reports it: ok and idle before any render, unavailable with the reason after a failed one", async () => {
    const before = await services();
    expect(before.shown.browser).toEqual({ status: "ok", detail: "0 of 4 pages rendering" });

    const render = await fetch(`${server.url}/v1/scrape`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: "http://127.0.0.1:9/", render: "always" }),
    });
    expect((await render.json()).error.code).toBe("browser_unavailable");
    const health = await (await fetch(`${server.url}/health`)).json();
    expect([health.status, health.services.browser.status]).toEqual(["degraded", "unavailable"]);

    const after = await services();
    expect(after.banner).toContain("Degraded");
    expect(after.shown.browser!.status).toBe("unavailable");
    expect(after.shown.browser!.detail).toContain(health.services.browser.error);
    // What is not down is still shown as it is.
    expect(after.shown.database!.status).toBe("ok");
  }, 60_000);
});
