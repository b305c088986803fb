/**
 * Two kinds of local host on one server (127.0.0.1), told apart by the Host header, for the
 * fairness tests (issue #28): `slow-N.test` hosts whose pages are held open (a site that trickles
 * its answer) until the test lets them go, one at a time, so "one of its pages ended" is an event
 * the test makes rather than a time it guesses; and `quick.test`, a five-page site that answers at
 * once (its home page links four pages). robots.txt is a 404 everywhere.
 */
import { createServer, type ServerResponse } from "node:http";

export interface HeldSite {
  port: number;
  /** Requests to slow hosts waiting for their answer, oldest first. */
  held: Array<{ host: string; path: string }>;
  /** Answers the oldest held request; false when none is held. */
  release(): boolean;
  /** Paths the quick host answered, in order. */
  quick: string[];
  slowUrls(hosts: number, perHost: number): string[];
  quickUrl: string;
  close(): Promise<void>;
}

const page = (title: string, links: string[]) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><article><h1>${title}</h1>` +
  `<p>A page of the fairness test site, with enough words in it to be read as an article by the extractor.</p>` +
  `${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</article></main></body></html>`;

export async function startHeldSite(): Promise<HeldSite> {
  const waiting: Array<{ host: string; path: string; res: ServerResponse }> = [];
  const quick: string[] = [];
  const server = createServer((req, res) => {
    const host = (req.headers.host ?? "").replace(/:\d+$/, "");
    const path = req.url ?? "/";
    if (path === "/robots.txt") return void res.writeHead(404).end();
    if (host === "quick.test") {
      quick.push(path);
      const links = path === "/" ? ["/p1", "/p2", "/p3", "/p4"] : ["/"];
      return void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page(`Quick ${path}`, links));
    }
    const entry = { host, path, res };
    waiting.push(entry);
    // A client that gave up (a cancelled job) leaves the line.
    res.on("close", () => {
      const i = waiting.indexOf(entry);
      if (i >= 0) waiting.splice(i, 1);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    get held() {
      return waiting.map(({ host, path }) => ({ host, path }));
    },
    release() {
      const next = waiting.shift();
      if (!next) return false;
      next.res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page(`Slow ${next.path}`, []));
      return true;
    },
    quick,
    slowUrls: (hosts, perHost) => Array.from({ length: hosts * perHost }, (_, i) => `http://slow-${i % hosts}.test:${port}/page-${i}`),
    quickUrl: `http://quick.test:${port}/`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** Resolves the held site's names to 127.0.0.1 and nothing else. */
export async function heldResolver(host: string): Promise<string[]> {
  return /^(slow-\d+|quick)\.test$/.test(host) ? ["127.0.0.1"] : [];
}

/** Polls `cond` every 20 ms until it holds; false when `ms` passed first. */
export async function until(cond: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** One API call as the test makes it (in process, or over HTTP): the answer's JSON. */
export type Call = (method: string, path: string, key: string, json?: unknown) => Promise<Record<string, any>>;

/**
 * Issue #28's starvation, made exact: account A's batch over slow hosts fills every worker
 * (`workers`, all instances together); then account B starts a five-page crawl of the quick host.
 * A's pages end one at a time, each when the test lets one go (a "page turn"), and only once every
 * worker is busy again (or B is done). Returns how many of A's pages had to end before B's crawl
 * completed (at most `maxTurns` are let go), B's job as it ended, and A's completed count then.
 */
export async function starvation(site: HeldSite, call: Call, keys: { a: string; b: string }, workers: number, maxTurns = 12) {
  const batch = await call("POST", "/v1/batch/scrape", keys.a, { urls: site.slowUrls(6, 8), timeout_ms: 60_000 });
  if (!String(batch.id).startsWith("batch_")) throw new Error(`A's batch was refused: ${JSON.stringify(batch)}`);
  if (!(await until(() => site.held.length === workers, 20_000))) throw new Error(`A's batch holds ${site.held.length} requests, not ${workers}`);
  const crawl = await call("POST", "/v1/crawl", keys.b, { url: site.quickUrl, limit: 10, max_depth: 2, timeout_ms: 5000 });
  if (!String(crawl.id).startsWith("crawl_")) throw new Error(`B's crawl was refused: ${JSON.stringify(crawl)}`);
  const bDone = async () => ["completed", "failed", "cancelled"].includes((await call("GET", `/v1/crawl/${crawl.id}`, keys.b)).status);
  let turns = 0;
  for (;;) {
    // Settled: every worker is back on A's held pages, or B is done.
    if (!(await until(async () => site.held.length === workers || (await bDone()), 20_000))) throw new Error("neither B ended nor did A's pages take every worker again");
    if ((await bDone()) || turns >= maxTurns) break;
    site.release();
    turns++;
  }
  const b = await call("GET", `/v1/crawl/${crawl.id}`, keys.b);
  const a = await call("GET", `/v1/batch/scrape/${batch.id}`, keys.a);
  await call("DELETE", `/v1/batch/scrape/${batch.id}`, keys.a);
  while (site.release());
  return { turns, b, aCompleted: a.completed as number, batchId: batch.id as string };
}
