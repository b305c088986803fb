/**
 * When every backend an answer needs has failed and each is suspended by its circuit breaker
 * (a 429 and its Retry-After, a back-off after errors), the 502 says when to come back: the
 * Retry-After header and error.retry_after, and each backend's retry_at. Real server over HTTP,
 * upstreams replayed with faults; natively, through the Tavily route and as an MCP tool error.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReplayServer } from "../helpers/replay-server.ts";
import { startReplayedQuarry } from "../helpers/replayed-quarry.ts";
import type { Server } from "../helpers/server.ts";

let server: Server;
let replay: ReplayServer;
let key: string;
const ENGINES = ["searxng", "duckduckgo", "wikipedia", "brave"];

let close: () => Promise<void>;

beforeAll(async () => {
  ({ server, replay, key, close } = await startReplayedQuarry("search,research"));
}, 60_000);
afterAll(async () => {
  await close?.();
});

const post = (path: string, body: unknown) =>
  fetch(server.url + path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

describe("every engine rate-limited: the 502 says when to retry", () => {
  it("search: Retry-After and retry_after from the engines' own Retry-After (120 s), each engine's retry_at, nothing charged", async () => {
    for (const id of ENGINES) replay.faults[id] = "429";
    const before = (await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()).used;
    const t0 = Date.now();
    const res = await post("/v1/search", { query: "rate limited everywhere" });
    expect(res.status).toBe(502);
    const retry = Number(res.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(118);
    expect(retry).toBeLessThanOrEqual(120);
    const { error } = await res.json();
    expect(error.retry_after).toBe(retry);
    for (const id of ENGINES) {
      expect(error.backends[id].error).toMatch(/429 Too Many Requests \(Retry-After 120 s\)/);
      expect(Date.parse(error.backends[id].retry_at) - t0).toBeGreaterThanOrEqual(119_000);
    }
    const after = (await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()).used;
    expect(after).toBe(before);
  });

  it("the next search, with every engine suspended, says the same wait instead of asking them", async () => {
    for (const id of ENGINES) delete replay.faults[id];
    const hits = { ...replay.hits };
    const res = await post("/v1/search", { query: "still suspended" });
    expect(res.status).toBe(502);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(100);
    const { error } = await res.json();
    expect(error.message).toMatch(/^No search backend could be asked/);
    for (const id of ENGINES) expect(error.backends[id]).toMatchObject({ status: "skipped", retry_at: expect.any(String) });
    expect(replay.hits).toEqual(hits);
  });

  it("research and the Tavily route carry the Retry-After too", async () => {
    const research = await post("/v1/research", { query: "why are the engines down" });
    expect(research.status).toBe(502);
    expect(Number(research.headers.get("retry-after"))).toBeGreaterThan(100);
    expect((await research.json()).error.retry_after).toBeGreaterThan(100);
    const tavily = await fetch(`${server.url}/compat/tavily/search`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ query: "tavily while suspended" }) });
    expect(tavily.status).toBe(502);
    expect(Number(tavily.headers.get("retry-after"))).toBeGreaterThan(100);
  });

  it("an agent's MCP search tool error carries retry_after", async () => {
    const client = new Client({ name: "walk", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const result = (await client.callTool({ name: "search", arguments: { query: "mcp while suspended" } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect((result.content[0] as { text: string }).text).toMatch(/^upstream_error: No search backend could be asked/);
      expect((result.structuredContent as { error: { retry_after: number } }).error.retry_after).toBeGreaterThan(100);
    } finally {
      await client.close();
    }
  });
});
