/**
 * What a crawl keeps in memory: its pages count no tokens, so a server that only crawls never
 * loads the token counter's tables (~60 MB resident; bench/RESULTS.md, "Crawl"), while the same
 * server's first scrape does. In a fresh process: the test setup preloads every library.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

it("a crawl reads and extracts its pages without loading the token counter; a scrape then loads it", () => {
  const child = fileURLToPath(new URL("./fixtures/crawl-footprint-child.ts", import.meta.url));
  const out = spawnSync(process.execPath, ["--import", "tsx", child], { encoding: "utf8", timeout: 120_000 });
  expect(out.status, out.stderr).toBe(0);
  const r = JSON.parse(out.stdout.trim().split("\n").at(-1)!);
  expect(r).toMatchObject({ before: false, status: "completed", afterCrawl: false, scrapeStatus: 200, afterScrape: true });
  expect(r.completed).toBeGreaterThanOrEqual(5);
  expect(r.withMarkdown).toBe(r.completed);
}, 150_000);
