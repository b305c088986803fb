/**
 * One real Quarry server process for the compatibility suites, over real HTTP: web search
 * replayed (only SearXNG answers, with links to local articles), pages served on 127.0.0.1,
 * and three accounts: `acme` (enterprise, every scope), `narrow` (search only) and `tight`
 * (free plan with a quota of 2, exhausted by the suites).
 */
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { replayEnv, startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";
import { QUESTION, searxngBody, serveArticles, type Served } from "../research/fixtures.ts";

export { QUESTION };

export interface Harness {
  server: Server;
  url: string;
  replay: ReplayServer;
  site: PageServer;
  served: Served[];
  /** `solo`: a key no other test uses, for exact usage counts while other jobs may still run. */
  keys: { full: string; narrow: string; tight: string; twin: string; solo: string };
  /** The native usage record of a key. */
  usage(key: string): Promise<{ used: number; endpoints: Record<string, number> }>;
  /** Uses up the tight key's quota with native calls. */
  exhaust(): Promise<void>;
  close(): Promise<void>;
}

export const ARTICLE_PAGE = "<html><head><title>Compaction in LSM trees</title><meta name=\"description\" content=\"Why LSM trees compact\"></head><body><nav><a href=\"/\">Home</a></nav><article><h1>Compaction in LSM trees</h1><p>Log-structured merge trees write sorted runs and must merge them, which is called compaction. Without compaction reads would have to look into every run.</p><p>Read more in <a href=\"/other\">the other article</a>.</p></article></body></html>";

export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const replay = await startReplayServer();
  const site = await startPageServer();
  const served = await serveArticles();
  site.route("/article", send("text/html; charset=utf-8", ARTICLE_PAGE));
  site.route("/other", send("text/html; charset=utf-8", ARTICLE_PAGE.replace("Compaction in LSM trees", "Another article")));
  // Only SearXNG answers: the other engines' recorded links point at public sites.
  Object.assign(replay.faults, { duckduckgo: "500", wikipedia: "500", brave: "500" });
  const results = served.map((s) => ({ url: s.url, title: s.title, content: s.snippet }));
  results.push({ url: "https://example.org/impeachment", title: "Impeachment hearings elsewhere", content: "A page on a site the domain filters can leave out." });
  replay.bodies.searxng = searxngBody(QUESTION, results);
  const dataDir = tempDataDir();
  const serverEnv = {
    QUARRY_DATA_DIR: dataDir,
    QUARRY_IP_RATE: "off",
    QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
    QUARRY_PLANS: '{"free":{"quota":2,"per_minute":1000},"enterprise":{"per_minute":10000}}',
    ...replayEnv(replay.url),
    ...env,
  };
  const server = await startServer("node", serverEnv);
  const cliEnv = { QUARRY_DATA_DIR: dataDir };
  const keys = {
    full: createKeyCli(cliEnv, "acme", "search,research,scrape,keys", "enterprise").key,
    twin: createKeyCli(cliEnv, "twin", "search,research,scrape,keys", "enterprise").key,
    solo: createKeyCli(cliEnv, "solo", "search,research,scrape", "enterprise").key,
    narrow: createKeyCli(cliEnv, "narrow", "search", "enterprise").key,
    tight: createKeyCli(cliEnv, "tight", "search,research,scrape").key,
  };
  const native = (path: string, key: string, body?: unknown) =>
    fetch(server.url + path, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  return {
    server,
    url: server.url,
    replay,
    site,
    served,
    keys,
    usage: async (key) => (await native("/v1/usage", key)).json(),
    exhaust: async () => {
      for (let i = 0; i < 2; i++) await (await native("/v1/search", keys.tight, { query: QUESTION })).text();
    },
    close: async () => {
      await server.stop();
      await replay.close();
      await site.close();
      await Promise.all(served.map((s) => s.site.close()));
    },
  };
}

/** The error a client call fails with (the test fails if it does not). */
export async function errorOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected the call to fail");
}
