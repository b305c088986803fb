/**
 * Video search failing the ways YouTube does, seen by a caller of a real server over HTTP and by
 * an agent through the real MCP client: upstreams replayed from the recordings, with faults.
 * A missing transcript says why; a plain 429 is not called a CAPTCHA and says its Retry-After;
 * an answer in a layout the parser does not know is a failure, not "no videos". Failed requests
 * cost nothing; answers with missing transcripts cost their unit.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Server } from "../helpers/server.ts";
import type { ReplayServer } from "../helpers/replay-server.ts";
import { startReplayedQuarry } from "../helpers/replayed-quarry.ts";

let server: Server;
let replay: ReplayServer;
let key: string;

let close: () => Promise<void>;

beforeAll(async () => {
  ({ server, replay, key, close } = await startReplayedQuarry("search"));
}, 60_000);
afterAll(async () => {
  await close?.();
});
beforeEach(() => {
  for (const k of Object.keys(replay.faults)) delete replay.faults[k];
  for (const k of Object.keys(replay.bodies)) delete replay.bodies[k];
});

async function post(path: string, body: unknown) {
  const res = await fetch(server.url + path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}
const used = async () => (await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()).used as number;

async function charged<T>(fn: () => Promise<T>): Promise<{ out: T; units: number }> {
  const before = await used();
  const out = await fn();
  return { out, units: (await used()) - before };
}

describe("video search: missing transcripts say why", () => {
  it("transcripts that all come back names each result with none and no reason to look for one", async () => {
    const { out, units } = await charged(() => post("/v1/video/search", { query: "test video", max_results: 3 }));
    expect(out.status).toBe(200);
    expect(out.body.meta.transcripts).toEqual({ found: 3, missing: [] });
    expect(units).toBe(1);
  });

  it("a player that fails: every snippet null, each video named with the player's HTTP 500, the answer still charged", async () => {
    replay.faults["youtube/youtubei/v1/player"] = "500";
    const { out, units } = await charged(() => post("/v1/video/search", { query: "test video player down", max_results: 3 }));
    expect(out.status).toBe(200);
    expect(out.body.results).toHaveLength(3);
    for (const r of out.body.results) expect(r.transcript_snippet).toBeNull();
    const { transcripts } = out.body.meta;
    expect(transcripts.found).toBe(0);
    expect(transcripts.missing.map((m: { video_id: string }) => m.video_id).sort()).toEqual(out.body.results.map((r: { video_id: string }) => r.video_id).sort());
    for (const m of transcripts.missing) expect(m.reason).toMatch(/player.*HTTP 500/);
    expect(units).toBe(1);
  });

  it("captions that fail are told apart from a player failure", async () => {
    replay.faults["youtube/api/timedtext"] = "500";
    const { status, body } = await post("/v1/video/search", { query: "test video captions down", max_results: 2 });
    expect(status).toBe(200);
    expect(body.meta.transcripts.found).toBe(0);
    for (const m of body.meta.transcripts.missing) expect(m.reason).toBe("captions HTTP 500");
  });

  it("no transcript report when none was asked for", async () => {
    const { body } = await post("/v1/video/search", { query: "test video basic", tier: "basic", max_results: 2 });
    expect(body.meta.transcripts).toBeUndefined();
  });

  it("an agent on MCP reads the same reasons in the video_search tool's answer", async () => {
    replay.faults["youtube/youtubei/v1/player"] = "500";
    const client = new Client({ name: "walk", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const result = (await client.callTool({ name: "video_search", arguments: { query: "test video over mcp", max_results: 2 } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const answer = JSON.parse((result.content[0] as { text: string }).text);
      expect(answer.meta.transcripts.found).toBe(0);
      expect(answer.meta.transcripts.missing[0].reason).toMatch(/player.*HTTP 500/);
    } finally {
      await client.close();
    }
  });
});

describe("video search: failed searches are named for what they are and cost nothing", () => {
  it("an answer in a layout the parser does not know is a 502 naming it, not an empty result list", async () => {
    replay.bodies.youtube = JSON.stringify({ contents: {} });
    const { out, units } = await charged(() => post("/v1/video/search", { query: "test video new layout" }));
    expect(out.status).toBe(502);
    expect(out.body.error.code).toBe("upstream_error");
    expect(out.body.error.backends.youtube.status).toBe("error");
    expect(out.body.error.message).toMatch(/youtube: parse: YouTube search: neither the search results layout/);
    expect(units).toBe(0);
  });

  // Last: the 429 suspends the backend for the Retry-After it gave.
  it("a plain 429 is a rate limit with its Retry-After, not a CAPTCHA page", async () => {
    replay.faults.youtube = "429";
    const { out, units } = await charged(() => post("/v1/video/search", { query: "test video rate limited" }));
    expect(out.status).toBe(502);
    expect(out.body.error.message).toContain("youtube: rate_limited: YouTube search answered 429 Too Many Requests (Retry-After 120 s)");
    expect(out.body.error.message).not.toMatch(/CAPTCHA/);
    expect(units).toBe(0);
    // The next request is not sent upstream and says until when.
    const next = await post("/v1/video/search", { query: "test video again" });
    expect(next.status).toBe(502);
    expect(next.body.error.backends.youtube.error).toMatch(/suspended until .* after rate_limited: .*Retry-After 120 s/);
  });
});

describe("video search: /health sees YouTube's player failing", () => {
  it("a search whose players all fail moves youtube to failing, though its search answered", async () => {
    // A fresh server: the health window above holds this file's earlier calls.
    const { server: fresh, replay: own, key: ownKey, close: closeFresh } = await startReplayedQuarry("search");
    try {
      own.faults["youtube/youtubei/v1/player"] = "500";
      const res = await fetch(`${fresh.url}/v1/video/search`, { method: "POST", headers: { authorization: `Bearer ${ownKey}`, "content-type": "application/json" }, body: JSON.stringify({ query: "test video", max_results: 3 }) });
      expect(res.status).toBe(200);
      const health = await (await fetch(`${fresh.url}/health`)).json();
      expect(health.status).toBe("degraded");
      expect(health.services.backends.failing).toContain("youtube");
      expect(health.services.backends.detail.youtube).toMatchObject({ status: "failing", calls: 4 });
      // Players that answer count as YouTube working.
      delete own.faults["youtube/youtubei/v1/player"];
      await (await fetch(`${fresh.url}/v1/video/search`, { method: "POST", headers: { authorization: `Bearer ${ownKey}`, "content-type": "application/json" }, body: JSON.stringify({ query: "test video again", max_results: 3 }) })).text();
      const after = await (await fetch(`${fresh.url}/health`)).json();
      expect(after.services.backends.detail.youtube).toMatchObject({ status: "ok", calls: 8 });
    } finally {
      await closeFresh();
    }
  }, 60_000);
});
