/**
 * `quarry mcp` answers every request it has read, even when the client closes stdin right after
 * writing them (a script piping its requests in, `printf … | quarry mcp`). It used to exit at
 * end of input and drop the answers still on their way from the server.
 */
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onCleanup } from "../helpers/temp.ts";
import { ROOT } from "../helpers/server.ts";

const KEY = `qry_${"ab".repeat(32)}`;

/** A stand-in for Quarry's POST /mcp: answers initialize at once and tools/list after 800 ms. */
function fakeMcpServer(): Promise<Server> {
  const body = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let s = "";
      req.on("data", (c) => (s += c)).on("end", () => resolve(s));
    });
  const server = createServer(async (req, res) => {
    if (req.method !== "POST" || req.headers.authorization !== `Bearer ${KEY}`) return void res.writeHead(405).end();
    const msg = JSON.parse(await body(req)) as { id?: number; method: string };
    if (msg.id === undefined) return void res.writeHead(202).end();
    const result =
      msg.method === "initialize"
        ? { protocolVersion: "2025-03-26", capabilities: { tools: {} }, serverInfo: { name: "fake", version: "1" } }
        : { tools: [{ name: "search", description: "d", inputSchema: { type: "object", properties: {} } }] };
    if (msg.method !== "initialize") await new Promise((r) => setTimeout(r, 800));
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe("quarry mcp at end of input", () => {
  let upstream: Server;
  beforeAll(async () => {
    upstream = await fakeMcpServer();
    onCleanup(() => new Promise((r) => upstream.close(r)));
  });
  afterAll(() => new Promise<void>((r) => upstream.close(() => r())));

  it("answers the requests it read before stdin closed, then exits 0", async () => {
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const child = spawn(process.execPath, [join(ROOT, "bin/quarry.js"), "mcp"], { cwd: ROOT, env: { ...process.env, QUARRY_URL: url, QUARRY_KEY: KEY }, stdio: ["pipe", "pipe", "pipe"] });
    onCleanup(() => child.kill("SIGKILL"));
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ];
    child.stdin.end(lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(0);
    const answers = out.trim().split("\n").map((l) => JSON.parse(l) as { id: number; result?: { tools?: Array<{ name: string }> } });
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[1]!.result?.tools?.map((t) => t.name)).toEqual(["search"]);
  }, 60_000);
});
