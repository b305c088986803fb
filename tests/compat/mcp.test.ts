/**
 * The real `@modelcontextprotocol/sdk` client against a real Quarry server: over Streamable
 * HTTP (`POST /mcp` with the Bearer key) and over stdio (`quarry mcp`, a child process calling
 * the server). Tools listed from the route table; search, scrape and research called; refusals
 * as tool errors or the transport's own error; usage counted as the native calls, chatter not.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/server.ts";
import { QUESTION, startHarness, type Harness } from "./harness.ts";

let h: Harness;
const open: Client[] = [];
const BAD = `qry_${"0".repeat(64)}`;

beforeAll(async () => {
  h = await startHarness();
  await h.exhaust();
}, 90_000);
afterAll(async () => {
  await Promise.all(open.map((c) => c.close().catch(() => {})));
  await h?.close();
});

async function overHttp(key: string): Promise<Client> {
  const client = new Client({ name: "quarry-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  open.push(client);
  return client;
}

async function overStdio(key: string): Promise<Client> {
  const client = new Client({ name: "quarry-test", version: "1.0.0" });
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => typeof e[1] === "string"));
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(ROOT, "bin/quarry.js"), "mcp"], env: { ...env, QUARRY_URL: h.url, QUARRY_KEY: key }, stderr: "pipe" }));
  open.push(client);
  return client;
}

const text = (r: CallToolResult) => (r.content[0] as { type: "text"; text: string }).text;

describe.each([
  ["Streamable HTTP", overHttp],
  ["stdio (quarry mcp)", overStdio],
] as const)("MCP over %s", (_name, connect) => {
  it("lists the tools with schemas from the REST routes and words for a model", async () => {
    const client = await connect(h.keys.full);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["search", "scrape", "map", "crawl", "crawl_status", "crawl_cancel", "batch_scrape", "batch_scrape_status", "batch_scrape_cancel", "collection_search", "video_search", "social_research", "research"]));
    expect(tools.find((t) => t.name === "collection_search")!.inputSchema.required).toEqual(["query", "name"]);
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(150);
      const props = t.inputSchema.properties as Record<string, { description?: string }>;
      for (const [field, p] of Object.entries(props)) expect(p.description, `${t.name}.${field}`).toBeTruthy();
    }
    const search = tools.find((t) => t.name === "search")!;
    expect(search.inputSchema.required).toEqual(["query"]);
    expect(Object.keys(search.inputSchema.properties!)).toEqual(expect.arrayContaining(["query", "tier", "max_results", "include_domains", "freshness"]));
    expect(Object.keys(tools.find((t) => t.name === "research")!.inputSchema.properties!)).not.toContain("stream");
    expect(tools.find((t) => t.name === "scrape")!.inputSchema.required).toEqual(["url"]);
  }, 30_000);

  it("calls search, scrape and research, each counted once in its usage group; the protocol chatter is free", async () => {
    const before = await h.usage(h.keys.full);
    const client = await connect(h.keys.full);
    await client.listTools();
    expect((await h.usage(h.keys.full)).used).toBe(before.used);

    const found = (await client.callTool({ name: "search", arguments: { query: QUESTION, max_results: 3, include_domains: ["127.0.0.1"] } })) as CallToolResult;
    expect(found.isError).toBeFalsy();
    const results = (found.structuredContent as { results: Array<{ url: string }> }).results;
    expect(results.length).toBe(3);
    expect(JSON.parse(text(found)).results).toEqual(results);

    const page = (await client.callTool({ name: "scrape", arguments: { url: `${h.site.url}/article` } })) as CallToolResult;
    expect(page.isError).toBeFalsy();
    expect((page.structuredContent as { data: { markdown: string } }).data.markdown).toContain("Log-structured merge trees write sorted runs");

    const report = (await client.callTool({ name: "research", arguments: { query: QUESTION, max_sources: 4 } })) as CallToolResult;
    expect(report.isError).toBeFalsy();
    const body = report.structuredContent as { report: { summary: string }; sources: unknown[] };
    expect(body.report.summary).toMatch(/\[S\d+\]/);
    expect(body.sources.length).toBeGreaterThan(1);

    const after = await h.usage(h.keys.full);
    expect(after.used - before.used).toBe(3);
    expect(after.endpoints.search - before.endpoints.search).toBe(1);
    expect(after.endpoints.scrape - before.endpoints.scrape).toBe(1);
    expect(after.endpoints.research - before.endpoints.research).toBe(1);
  }, 60_000);

  it("a missing scope, an exhausted quota and a refused URL are tool errors with the code and message", async () => {
    const narrow = await connect(h.keys.narrow);
    const scope = (await narrow.callTool({ name: "scrape", arguments: { url: `${h.site.url}/article` } })) as CallToolResult;
    expect(scope.isError).toBe(true);
    expect(text(scope)).toMatch(/^insufficient_scope: .*"scrape" scope/);
    const tight = await connect(h.keys.tight);
    const quota = (await tight.callTool({ name: "search", arguments: { query: QUESTION } })) as CallToolResult;
    expect(quota.isError).toBe(true);
    expect(text(quota)).toMatch(/^quota_exceeded: /);
    const full = await connect(h.keys.full);
    const before = await h.usage(h.keys.full);
    const refused = (await full.callTool({ name: "scrape", arguments: { url: "file:///etc/passwd" } })) as CallToolResult;
    expect(text(refused)).toMatch(/^url_not_allowed: /);
    const invalid = (await full.callTool({ name: "search", arguments: { query: "" } })) as CallToolResult;
    expect(text(invalid)).toMatch(/^invalid_request: /);
    expect((await h.usage(h.keys.full)).used).toBe(before.used);
  }, 30_000);

  it("a tool that does not exist is a protocol error, -32602 (MCP 2025-06-18, tools: Error Handling), not a tool result", async () => {
    const client = await connect(h.keys.full);
    const err = await client.callTool({ name: "serach", arguments: { query: QUESTION } }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
    expect((err as McpError).message).toBe("MCP error -32602: Unknown tool: serach; call tools/list for the tools this server has.");
  }, 30_000);
});

describe("JSON-RPC on POST /mcp, as sent by hand", () => {
  const post = (body: string) => fetch(`${h.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${h.keys.full}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body,
  });

  it("an unknown tool: an error response with code -32602 and the request's id, no result", async () => {
    const res = await post(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "nope", arguments: {} } }));
    const body = await res.json();
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain("Unknown tool: nope");
    expect(body.error.data.request_id).toBe(res.headers.get("x-request-id"));
    expect(body).not.toHaveProperty("result");
  }, 30_000);

  it("an empty batch [] is an Invalid Request (-32600), answered with one error, not a 202", async () => {
    for (const empty of ["[]", " [ ]\n"]) {
      const res = await post(empty);
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) } });
    }
    // A batch with a message in it is still answered, message by message.
    const batch = await post(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping" }]));
    expect(batch.status).toBe(200);
    expect([await batch.json()].flat()).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
  }, 30_000);
});

describe("a bad key", () => {
  it("over HTTP: the transport's own error with status 401, before any protocol message", async () => {
    const err = await overHttp(BAD).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(401);
    expect((err as Error).message).toContain("invalid_key");
    const res = await fetch(`${h.url}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await res.json()).error.request_id).toBe(res.headers.get("x-request-id"));
  }, 30_000);

  it("over stdio: listing fails with an MCP error naming it, a call is a tool error", async () => {
    const client = await overStdio(BAD);
    const err = await client.listTools().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as Error).message).toContain("invalid_key");
    const call = (await client.callTool({ name: "search", arguments: { query: QUESTION } })) as CallToolResult;
    expect(call.isError).toBe(true);
    expect(text(call)).toMatch(/^invalid_key: /);
  }, 30_000);

  it("quarry mcp without QUARRY_KEY says so on stderr and exits 1, printing nothing on stdout", () => {
    const env: NodeJS.ProcessEnv = { ...process.env, QUARRY_URL: h.url };
    delete env.QUARRY_KEY;
    const r = spawnSync(process.execPath, [join(ROOT, "bin/quarry.js"), "mcp"], { env, encoding: "utf8", timeout: 30_000, input: "" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("QUARRY_KEY");
    expect(r.stdout).toBe("");
  }, 30_000);

  it("quarry mcp with a QUARRY_URL that is not an http(s) URL exits 1 naming it, before any client connects", () => {
    for (const url of ["notaurl", "ftp://quarry.example/"]) {
      const r = spawnSync(process.execPath, [join(ROOT, "bin/quarry.js"), "mcp"], { env: { ...process.env, QUARRY_URL: url, QUARRY_KEY: h.keys.full }, encoding: "utf8", timeout: 30_000, input: "" });
      expect(r.status, url).toBe(1);
      expect(r.stderr, url).toBe(`quarry: QUARRY_URL: "${url.replace(/\/+$/, "")}" is not an http(s) URL of a Quarry server, such as http://127.0.0.1:8080.\n`);
      expect(r.stdout).toBe("");
    }
  }, 30_000);

  it("GET and DELETE answer 405: this server keeps no sessions", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(`${h.url}/mcp`, { method, headers: { authorization: `Bearer ${h.keys.full}`, accept: "text/event-stream" } });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
  }, 30_000);

  it("initialize and tools/list carry the calling key's own X-RateLimit headers, as its tool calls do", async () => {
    const rpc = (key: string, method: string, id: number) =>
      fetch(`${h.url}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id, method, params: method === "initialize" ? { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } : {} }),
      });
    for (const method of ["initialize", "tools/list"]) {
      // The tight key is on free (quota 2) and used up; the full key is on enterprise (unlimited).
      const tight = await rpc(h.keys.tight, method, 1);
      expect(tight.status, method).toBe(200);
      expect([tight.headers.get("x-ratelimit-limit"), tight.headers.get("x-ratelimit-remaining")], method).toEqual(["2", "0"]);
      const full = await rpc(h.keys.full, method, 2);
      expect([full.headers.get("x-ratelimit-limit"), full.headers.get("x-ratelimit-remaining")], method).toEqual(["unlimited", "unlimited"]);
      await Promise.all([tight.text(), full.text()]);
    }
  }, 30_000);
});
