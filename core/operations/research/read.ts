/**
 * Reads the chosen sources' pages through the guarded page port, all at once under one
 * deadline. A page that fails, is not HTML or is late is reported, never fatal.
 */
import { describeBlock, detectBlock } from "../../net/blocks.ts";
import { extractPage } from "../../extract/run.ts";
import { FetchTimeout } from "../../net/fetch-errors.ts";
import type { Ports } from "../../ports.ts";

export type PageOutcome =
  | { status: "read"; text: string; title: string | null; published_at: string | null }
  | { status: "failed"; reason: string }
  | { status: "skipped"; reason: string };

async function readOne(ports: Ports, url: string, deadline: number): Promise<PageOutcome> {
  const left = deadline - ports.clock.now();
  if (left < 200) return { status: "skipped", reason: "no time left before the deadline" };
  let host = "";
  try {
    host = new URL(url).hostname;
    const page = await ports.pages.fetchPage(url, { timeoutMs: Math.min(left, 8_000) });
    const type = (page.contentType ?? "").toLowerCase();
    if (page.status >= 400) throw new Error(wallOrStatus(page));
    if (!(type.includes("html") || type === "")) throw new Error(`not an HTML page (${type})`);
    const content = await extractPage(ports, { body: page.body, contentType: page.contentType, url: page.finalUrl, onlyMainContent: true, formats: ["text"] });
    await ports.sources.record(host, { fetched: true, ok: true }).catch(() => {});
    if (!content.text.trim()) return { status: "skipped", reason: "no readable text" };
    return { status: "read", text: content.text, title: content.title, published_at: content.published_at };
  } catch (err) {
    if (host) await ports.sources.record(host, { fetched: true, ok: false }).catch(() => {});
    // The port's own timeout is the deadline speaking: the page was late, not broken.
    if (err instanceof FetchTimeout) return { status: "skipped", reason: "not read before the deadline" };
    return { status: "failed", reason: err instanceof Error ? err.message : String(err) };
  }
}

/** Settles at the deadline with "skipped", so one slow page never delays the report. */
function byDeadline(p: Promise<PageOutcome>, ports: Ports, deadline: number): Promise<PageOutcome> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve({ status: "skipped", reason: "not read before the deadline" }), Math.max(0, deadline - ports.clock.now()));
    p.then(resolve, (err) => resolve({ status: "failed", reason: String(err) })).finally(() => clearTimeout(t));
  });
}

export async function readPages(ports: Ports, urls: readonly string[], deadline: number, onRead?: (done: number, total: number) => void): Promise<PageOutcome[]> {
  let done = 0;
  return Promise.all(
    urls.map((url) =>
      byDeadline(readOne(ports, url, deadline), ports, deadline).then((outcome) => {
        done++;
        onRead?.(done, urls.length);
        return outcome;
      }),
    ),
  );
}

/** Why a page that answered an error status was not read: a bot wall says which (api.md §12). */
function wallOrStatus(page: { status: number; headers: Headers; body: Uint8Array }): string {
  const block = detectBlock(page.status, page.headers, page.body);
  return block ? `the page answered with a bot wall (${describeBlock(block)})` : `the page answered HTTP ${page.status}`;
}
