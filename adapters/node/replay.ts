/**
 * Replayed upstreams: one local HTTP server (127.0.0.1) that stands in for every backend, each
 * under its own path prefix (`/<backend id>/…`, which `QUARRY_<ID>_URL` points at), answering
 * each upstream path with a real recorded body from tests/fixtures/upstream/ or with a fault.
 * `quarry demo` serves it so a newcomer without internet can try every operation, and the test
 * suites use the same server, so there is one replay mechanism.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";

export type Fault = "ok" | "hang" | "500" | "429" | "captcha" | "garbage";

export interface RecordedAnswer {
  /** Path under tests/fixtures/upstream/. */
  file: string;
  type: string;
  /** Longest first: the first route whose prefix the upstream path starts with answers. */
  path: string;
}

const JSON_TYPE = "application/json";

/** What each backend's upstream answers, by path, from the recordings (see tests/fixtures/upstream/SOURCES.tsv). */
export const RECORDED: Record<string, RecordedAnswer[]> = {
  duckduckgo: [{ path: "/html/", type: "text/html; charset=utf-8", file: "duckduckgo/html_results_exit_nvim.html" }],
  wikipedia: [{ path: "/w/api.php", type: JSON_TYPE, file: "wikipedia/mw_api_generator_search_formatversion2.json" }],
  brave: [
    { path: "/res/v1/web/search", type: JSON_TYPE, file: "brave/web_search_blue_tack_minimal.json" },
    { path: "/res/v1/news/search", type: JSON_TYPE, file: "brave/news_search_synthetic.json" },
  ],
  searxng: [{ path: "/search", type: JSON_TYPE, file: "searxng/search_format_json_synthetic.json" }],
  youtube: [
    { path: "/youtubei/v1/search", type: JSON_TYPE, file: "youtube/innertube_web_search_test_videos.json" },
    { path: "/youtubei/v1/player", type: JSON_TYPE, file: "youtube/innertube_web_player_2isYuQZMbdU_captions.json" },
    { path: "/api/timedtext", type: JSON_TYPE, file: "youtube/timedtext_json3_asr_en.json" },
  ],
  hackernews: [
    { path: "/api/v1/search", type: JSON_TYPE, file: "hackernews/algolia_search__tags-story.json" },
    { path: "/api/v1/items/", type: JSON_TYPE, file: "hackernews/algolia_items_17.json" },
  ],
  stackexchange: [{ path: "/2.3/search/advanced", type: JSON_TYPE, file: "stackexchange/questions_tagged_html_2016.json" }],
  github: [{ path: "/search/issues", type: JSON_TYPE, file: "github/search_issues_sesame.json" }],
  lemmy: [{ path: "/api/v3/search", type: JSON_TYPE, file: "lemmy/api_v3_search_posts_synthetic.json" }],
};

const FIXTURES = fileURLToPath(new URL("../../tests/fixtures/upstream/", import.meta.url));
const fixture = (file: string) => readFileSync(FIXTURES + file, "utf8");

export interface ReplayServer {
  url: string;
  /** The base URL one backend is given (`QUARRY_<ID>_URL`). */
  baseFor(id: string): string;
  /** `QUARRY_<ID>_URL` (and the keys a keyed backend needs) for every recorded backend. */
  env(): Record<string, string>;
  /**
   * A fault per backend id, for tests; a key of the backend id and one recorded path
   * (`youtube/api/timedtext`) faults only that upstream path and wins over the backend's own.
   */
  faults: Record<string, Fault>;
  /** A body that replaces a backend's recording (e.g. a SearXNG answer whose links point at local pages). */
  bodies: Record<string, string>;
  /** Requests seen per backend id. */
  hits: Record<string, number>;
  /** The path and query of every request, per backend id (what the backend asked its upstream). */
  requests: Record<string, string[]>;
  close(): Promise<void>;
}

export async function startReplayServer(options: { host?: string; port?: number } = {}): Promise<ReplayServer> {
  const faults: Record<string, Fault> = {};
  const bodies: Record<string, string> = {};
  const hits: Record<string, number> = {};
  const requests: Record<string, string[]> = {};
  const hanging = new Set<ServerResponse>();

  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const [, id = "", ...rest] = (req.url ?? "").split("?")[0]!.split("/");
    const path = `/${rest.join("/")}`;
    // SearXNG's own health endpoint (what services.metasearch asks).
    if (id === "searxng" && path === "/healthz") return res.writeHead(faults.searxng === "500" ? 500 : 200, { "content-type": "text/plain" }).end("OK");
    const route = RECORDED[id]?.find((r) => path.startsWith(r.path));
    if (!route) return res.writeHead(404, { "content-type": "text/plain" }).end(`nothing recorded for ${id}${path}`);
    hits[id] = (hits[id] ?? 0) + 1;
    (requests[id] ??= []).push(`${path}${(req.url ?? "").includes("?") ? `?${(req.url ?? "").split("?").slice(1).join("?")}` : ""}`);
    req.resume();
    switch (faults[`${id}${route.path}`] ?? faults[id] ?? "ok") {
      case "hang":
        hanging.add(res);
        return;
      case "500":
        return res.writeHead(500, { "content-type": "text/plain" }).end("upstream exploded");
      case "429":
        return res.writeHead(429, { "retry-after": "120", "content-type": "text/plain" }).end("slow down");
      case "captcha":
        return res.writeHead(200, { "content-type": "text/html" }).end(fixture("duckduckgo/html_anomaly_challenge_synthetic.html"));
      case "garbage":
        return res.writeHead(200, { "content-type": route.type }).end("\u0000\u0001 not what you expected {");
      default:
        return res.writeHead(200, { "content-type": route.type }).end(bodies[id] ?? fixture(route.file));
    }
  };

  const server = createServer(answer);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const url = `http://${options.host ?? "127.0.0.1"}:${(server.address() as { port: number }).port}`;
  const baseFor = (id: string) => `${url}/${id}`;
  return {
    url,
    baseFor,
    env: () => ({
      ...Object.fromEntries(Object.keys(RECORDED).map((id) => [`QUARRY_${id.toUpperCase()}_URL`, baseFor(id)])),
      QUARRY_BRAVE_KEY: "replayed",
    }),
    faults,
    bodies,
    hits,
    requests,
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
