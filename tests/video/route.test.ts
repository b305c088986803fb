/** POST /v1/video/search as the app mounts it, over the replay fetch. */
import { afterEach, describe, expect, it } from "vitest";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { BASE, replayFetch, yt, type ReplayRoutes } from "./helpers.ts";

const ROUTES: ReplayRoutes = {
  search: yt("innertube_web_search_test_videos.json"),
  players: { default: yt("innertube_android_player_GJLlxj_dtq8_ok.json") },
  captions: { default: yt("timedtext_json3_asr_en.json") },
};

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function mount(routes: ReplayRoutes) {
  const { fetch, calls } = replayFetch(routes);
  app = await makeApp({
    env: { QUARRY_YOUTUBE_URL: BASE },
    fetch, // the built-in route, with the replay standing in for YouTube

  });
  const { secret } = await app.key("acme", ["search"]);
  return { app, secret, calls };
}

describe("POST /v1/video/search", () => {
  it("answers 200 with meta and results, metered in the video group", async () => {
    const { app, secret } = await mount(ROUTES);
    const res = await app.request("/v1/video/search", { method: "POST", key: secret, json: { query: "mind map download", max_results: 3 } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.meta).toMatchObject({ query: "mind map download", results_count: 3 });
    expect(body.meta.tokens_used).toBeGreaterThan(0);
    expect(body.results).toHaveLength(3);
    expect(body.results[0].transcript_snippet).toMatch(/mind map/i);
    const usage = await (await app.request("/v1/usage", { key: secret })).json();
    expect(usage.endpoints.video).toBe(1);
  });

  it("400 names the field", async () => {
    const { app, secret } = await mount(ROUTES);
    const res = await app.request("/v1/video/search", { method: "POST", key: secret, json: { query: "x", max_results: 50 } });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error).toMatchObject({ code: "invalid_request", details: [{ field: "max_results" }] });
  });

  it("502 upstream_error when YouTube blocks the search", async () => {
    const { app, secret } = await mount({ ...ROUTES, search: { status: 429, body: yt("www_youtube_too_many_requests.html") } });
    const res = await app.request("/v1/video/search", { method: "POST", key: secret, json: { query: "x" } });
    expect(res.status).toBe(502);
    expect((await res.json()).error.code).toBe("upstream_error");
  });
});
