import { afterEach, describe, expect, it } from "vitest";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { replay } from "./replay.ts";

const up = replay([
  { prefix: "hn.algolia.com/api/v1/search", reply: "hackernews/algolia_search__tags-story.json" },
  { prefix: "hn.algolia.com/api/v1/items/", reply: "hackernews/algolia_items_17.json" },
  { prefix: "api.github.com", reply: () => new Response('{"message":"Bad credentials"}', { status: 401 }) },
  { prefix: "lemmy.world", reply: () => new Response("nope", { status: 503 }) },
]);

let app: TestApp | undefined;
afterEach(async () => app?.close());

async function setup() {
  // The built-in route, with the replay standing in for the platforms (the fetch port).
  app = await makeApp({ fetch: up.fetch });
  const { secret } = await app.key("acme", ["research"]);
  return { app, secret };
}

describe("POST /v1/social/research", () => {
  it("answers 200 with sources, meta.platforms and a cited report", async () => {
    const { app, secret } = await setup();
    const res = await app.request("/v1/social/research", { method: "POST", key: secret, json: { query: "apple", platforms: ["hackernews", "github"] } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.meta.platforms.hackernews).toMatchObject({ status: "ok", kept: 1 });
    expect(body.meta.platforms.github).toMatchObject({ status: "error", reason: expect.stringContaining("Bad credentials") });
    expect(body.sources[0]).toMatchObject({ id: "hn:3078128", also_discussed_on: [] });
    expect(body.report.summary).toContain("[hn:3078128]");
  });

  it("refuses bad bodies naming the field, and answers 502 naming the failed platforms", async () => {
    const { app, secret } = await setup();
    const bad = await app.request("/v1/social/research", { method: "POST", key: secret, json: { query: "x", max_sources: 99 } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ code: "invalid_request", details: [{ field: "max_sources" }] });
    const failed = await app.request("/v1/social/research", { method: "POST", key: secret, json: { query: "x", platforms: ["github", "lemmy"] } });
    expect(failed.status).toBe(502);
    const error = (await failed.json()).error;
    expect(error.code).toBe("upstream_error");
    expect(error.message).toMatch(/github .*lemmy/);
  });

  it("needs the research scope", async () => {
    const { app } = await setup();
    const { secret } = await app.key("other", ["search"]);
    const res = await app.request("/v1/social/research", { method: "POST", key: secret, json: { query: "x" } });
    expect(res.status).toBe(403);
  });
});
