/**
 * A local replay server (127.0.0.1) standing in for every web search upstream: it answers
 * each upstream path with its real recorded body from tests/fixtures/upstream/, or with a
 * fault a test asks for. Point QUARRY_<ID>_URL at it.
 */
import { readFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import { join } from "node:path";
import { ROOT } from "./server.ts";

export type Fault = "ok" | "hang" | "500" | "429" | "captcha" | "garbage";

const FIX = (p: string) => readFileSync(join(ROOT, "tests/fixtures/upstream", p), "utf8");

export const RECORDED: Record<string, { path: string; type: string; body: () => string }> = {
  duckduckgo: { path: "/html/", type: "text/html; charset=utf-8", body: () => FIX("duckduckgo/html_results_exit_nvim.html") },
  wikipedia: { path: "/w/api.php", type: "application/json", body: () => FIX("wikipedia/mw_api_generator_search_formatversion2.json") },
  brave: { path: "/res/v1/web/search", type: "application/json", body: () => FIX("brave/web_search_blue_tack_minimal.json") },
  searxng: { path: "/search", type: "application/json", body: () => FIX("searxng/search_format_json_synthetic.json") },
};

export interface ReplayServer {
  url: string;
  faults: Record<string, Fault>;
  /** Replaces a backend's body (e.g. a SearXNG answer whose links point at local pages). */
  bodies: Record<string, string>;
  hits: Record<string, number>;
  close(): Promise<void>;
}

export async function startReplayServer(): Promise<ReplayServer> {
  const faults: Record<string, Fault> = {};
  const bodies: Record<string, string> = {};
  const hits: Record<string, number> = {};
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    // SearXNG's own health endpoint (what services.metasearch asks).
    if (path === "/healthz") return res.writeHead(faults.searxng === "500" ? 500 : 200, { "content-type": "text/plain" }).end("OK");
    const id = Object.keys(RECORDED).find((k) => RECORDED[k].path === path);
    if (!id) return res.writeHead(404).end();
    hits[id] = (hits[id] ?? 0) + 1;
    req.resume();
    switch (faults[id] ?? "ok") {
      case "hang":
        hanging.add(res);
        return;
      case "500":
        return res.writeHead(500, { "content-type": "text/plain" }).end("upstream exploded");
      case "429":
        return res.writeHead(429, { "retry-after": "120", "content-type": "text/plain" }).end("slow down");
      case "captcha":
        return res.writeHead(200, { "content-type": "text/html" }).end(FIX("duckduckgo/html_anomaly_challenge_synthetic.html"));
      case "garbage":
        return res.writeHead(200, { "content-type": RECORDED[id].type }).end("\u0000\u0001 not what you expected {");
      default:
        return res.writeHead(200, { "content-type": RECORDED[id].type }).end(bodies[id] ?? RECORDED[id].body());
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    faults,
    bodies,
    hits,
    close: () =>
      new Promise((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function replayEnv(url: string): Record<string, string> {
  return { QUARRY_DUCKDUCKGO_URL: url, QUARRY_WIKIPEDIA_URL: url, QUARRY_BRAVE_URL: url, QUARRY_BRAVE_KEY: "test-key", QUARRY_SEARXNG_URL: url };
}
