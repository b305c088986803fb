/** GET /metrics: what an operator scrapes, from real requests through the gateway and the backends. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPrometheusMetrics } from "../../adapters/metrics/prometheus.ts";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { send, startPageServer } from "../helpers/page-server.ts";
import { replayEnv, startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";

/** The value of one series in Prometheus text, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name + "{")) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf("}"));
    const got = Object.fromEntries([...body.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}

describe("GET /metrics", () => {
  let replay: ReplayServer;
  let t: TestApp | undefined;
  beforeAll(async () => {
    replay = await startReplayServer();
  });
  afterAll(() => replay.close());
  afterEach(async () => {
    await t?.close();
    t = undefined;
    for (const k of Object.keys(replay.faults)) delete replay.faults[k];
  });

  async function app(env: Record<string, string>) {
    t = await makeApp({ env: { ...replayEnv(replay.url), QUARRY_PLANS: '{"free":{"quota":2,"per_minute":1000}}', ...env }, metrics: createPrometheusMetrics() });
    t.clock.now = () => Date.now();
    return t;
  }

  it("is absent unless QUARRY_METRICS is on", async () => {
    const t = await app({});
    expect((await t.request("/metrics")).status).toBe(404);
  });

  it("counts requests by route pattern and status, latency, backend calls by outcome, refusals, cache hits and backend health", async () => {
    const t = await app({ QUARRY_METRICS: "true" });
    const { secret } = await t.key("acme", ["search", "keys"]);
    replay.faults.duckduckgo = "500";
    const search = () => t.request("/v1/search", { method: "POST", key: secret, json: { query: "blue tack" } });
    expect((await search()).status).toBe(200);
    expect((await search()).status).toBe(200); // from the cache
    expect((await search()).status).toBe(429); // quota of 2 spent
    expect((await t.request("/v1/keys/key_nope", { method: "DELETE", key: secret })).status).toBe(404);
    expect((await t.request("/v1/usage")).status).toBe(401);
    const res = await t.request("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(sample(text, "quarry_http_requests_total", { route: "/v1/search", method: "POST", status: "200" })).toBe(2);
    expect(sample(text, "quarry_http_requests_total", { route: "/v1/search", method: "POST", status: "429" })).toBe(1);
    expect(sample(text, "quarry_http_requests_total", { route: "/v1/keys/:key_id", method: "DELETE", status: "404" })).toBe(1);
    expect(sample(text, "quarry_http_requests_total", { route: "/v1/usage", method: "GET", status: "401" })).toBe(1);
    expect(sample(text, "quarry_http_request_duration_seconds_count", { route: "/v1/search", method: "POST" })).toBe(3);
    expect(sample(text, "quarry_backend_calls_total", { backend: "wikipedia", outcome: "ok" })).toBe(1);
    expect(sample(text, "quarry_backend_calls_total", { backend: "duckduckgo", outcome: "http" })).toBe(1);
    expect(sample(text, "quarry_backend_call_duration_seconds_count", { backend: "brave" })).toBe(1);
    expect(sample(text, "quarry_limit_refusals_total", { reason: "quota_exceeded" })).toBe(1);
    expect(sample(text, "quarry_cache_lookups_total", { kind: "search", result: "miss" })).toBe(1);
    expect(sample(text, "quarry_cache_lookups_total", { kind: "search", result: "hit" })).toBe(1);
    expect(sample(text, "quarry_backend_up", { backend: "duckduckgo" })).toBe(0);
    expect(sample(text, "quarry_backend_up", { backend: "wikipedia" })).toBe(1);
    expect(sample(text, "quarry_backend_success_rate", { backend: "duckduckgo" })).toBe(0);
    // No key, key id or query text ever becomes a label.
    expect(text).not.toContain(secret.slice(4, 20));
    expect(text).not.toContain("blue tack");
  });

  it("shows the extraction workers: one running after a scrape, none busy, nothing queued", async () => {
    const site = await startPageServer();
    site.route("/a", send("text/html", "<html><head><title>A</title></head><body><article><p>Enough words in one paragraph to count as the main content of this page.</p></article></body></html>"));
    try {
      // SQLite storage builds the ports as the server does, extraction pool included.
      t = await makeApp({ storage: "sqlite", env: { QUARRY_METRICS: "true" }, metrics: createPrometheusMetrics(), pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }) });
      const { secret } = await t.key("acme", ["scrape"]);
      const before = await (await t.request("/metrics")).text();
      expect(sample(before, "quarry_extract_workers", { state: "running" })).toBe(0);
      const r = await t.request("/v1/scrape", { method: "POST", key: secret, json: { url: `${site.url}/a`, formats: ["markdown"] } });
      expect(r.status).toBe(200);
      expect((await r.json()).data.markdown).toContain("Enough words");
      const text = await (await t.request("/metrics")).text();
      expect(sample(text, "quarry_extract_workers", { state: "running" })).toBe(1);
      expect(sample(text, "quarry_extract_workers", { state: "busy" })).toBe(0);
      expect(sample(text, "quarry_extract_workers", { state: "queued" })).toBe(0);
    } finally {
      await site.close();
    }
  }, 60_000);

  it("asks for QUARRY_METRICS_TOKEN as a bearer token when one is set", async () => {
    const t = await app({ QUARRY_METRICS: "on", QUARRY_METRICS_TOKEN: "scrape-me-please" });
    const none = await t.request("/metrics");
    expect(none.status).toBe(401);
    expect((await none.json()).error.code).toBe("missing_auth");
    expect((await t.request("/metrics", { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const ok = await t.request("/metrics", { headers: { authorization: "Bearer scrape-me-please" } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("quarry_http_requests_total");
  });
});
