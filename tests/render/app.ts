/**
 * The render tests' app: a browser pool allowed to reach the render site only, and an app that reads
 * through it, with a key of the `scrape` scope for "acme". `warm` starts Chromium with one render first,
 * so each test's deadline covers its own render, not the browser's launch.
 */
import { createBrowserPool, type BrowserPool } from "../../adapters/browser/pool.ts";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import type { ExtractPort } from "../../core/ports/extract.ts";
import { makeApp, MemoryLogger, type TestApp } from "../helpers/app.ts";
import { renderResolver, SITE_HOST, type Site } from "./site.ts";

export interface RenderApp {
  pool: BrowserPool;
  t: TestApp;
  key: string;
  close(): Promise<void>;
}

export async function startRenderApp(site: Site, opts: {
  executablePath: string | null;
  env?: Record<string, string>;
  storage?: "sqlite";
  extract?: ExtractPort;
  /** The browser's own resolver (default: the site's names). */
  resolver?: (host: string) => Promise<string[]>;
  warm?: boolean;
}): Promise<RenderApp> {
  const allow = parseAllowList([`${SITE_HOST}/32`]);
  const pool = createBrowserPool({ executablePath: opts.executablePath, maxPages: 4, allow, resolver: opts.resolver ?? renderResolver(), userAgent: "QuarryBot/test", logger: new MemoryLogger() });
  const t = await makeApp({
    ...(opts.storage ? { storage: opts.storage } : {}),
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.extract ? { extract: opts.extract } : {}),
    pages: createSafeFetch({ allow, resolver: renderResolver() }),
    render: pool,
  });
  t.clock.now = () => Date.now();
  const key = (await t.key("acme", ["scrape"])).secret;
  if (opts.warm) await pool.render({ url: `${site.url}/click`, timeoutMs: 60_000 });
  return { pool, t, key, close: async () => { await t.close(); await pool.close(); } };
}
