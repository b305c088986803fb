/**
 * Social research from a real server over HTTP (and an agent's MCP tool), the platforms replayed
 * from the recordings with faults: one platform down is a partial answer that names it; every
 * platform rate-limited is a 502 that says when to retry (Retry-After, error.retry_after and each
 * platform's retry_at) and costs nothing.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReplayServer } from "../helpers/replay-server.ts";
import { startReplayedQuarry } from "../helpers/replayed-quarry.ts";
import type { Server } from "../helpers/server.ts";

const PLATFORMS = ["hackernews", "stackexchange", "github", "lemmy"];
let server: Server;
let replay: ReplayServer;
let key: string;

let close: () => Promise<void>;

beforeAll(async () => {
  ({ server, replay, key, close } = await startReplayedQuarry("research"));
}, 60_000);
afterAll(async () => {
  await close?.();
});

const post = (body: unknown) =>
  fetch(`${server.url}/v1/social/research`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
const used = async () => (await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()).used as number;

describe("social research when platforms fail", () => {
  it("one platform down: 200 from the others, the failed one named with its error, charged once", async () => {
    replay.faults.github = "500";
    const before = await used();
    const res = await post({ query: "sesame" });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.meta.platforms.github).toMatchObject({ status: "error", returned: 0, reason: "http: GitHub answered HTTP 500" });
    expect(body.meta.platforms.stackexchange.status).toBe("ok");
    expect(body.sources.some((s: { platform: string }) => s.platform === "github")).toBe(false);
    expect(await used()).toBe(before + 1);
    delete replay.faults.github;
  });

  it("every platform rate-limited: 502 with Retry-After, retry_after and each platform's retry_at; not charged", async () => {
    for (const id of PLATFORMS) replay.faults[id] = "429";
    const before = await used();
    const res = await post({ query: "everyone is rate limited" });
    expect(res.status).toBe(502);
    const retry = Number(res.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(100);
    expect(retry).toBeLessThanOrEqual(120);
    const { error } = await res.json();
    expect(error.code).toBe("upstream_error");
    expect(error.retry_after).toBe(retry);
    for (const id of PLATFORMS) expect(error.platforms[id]).toMatchObject({ status: "error", reason: expect.stringMatching(/^rate_limited: /), retry_at: expect.any(String) });
    expect(await used()).toBe(before);
  });

  it("the MCP social_research tool error gives an agent the wait too", async () => {
    const client = new Client({ name: "walk", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const result = (await client.callTool({ name: "social_research", arguments: { query: "still rate limited" } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect((result.content[0] as { text: string }).text).toMatch(/^upstream_error: Every requested platform failed/);
      expect((result.structuredContent as { error: { retry_after: number } }).error.retry_after).toBeGreaterThan(60);
    } finally {
      await client.close();
    }
  });
});
