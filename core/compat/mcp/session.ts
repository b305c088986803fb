/**
 * One MCP server for one HTTP request (the stateless Streamable HTTP mode: nothing is kept
 * between requests, so any instance can answer any request). tools/list answers from the route
 * table; tools/call sends the native request through the app with the caller's key, so it passes
 * the native endpoint's gateway; a refusal or failure is a tool error carrying code and message.
 * A tool that does not exist is a protocol error, -32602, as the MCP specification (2025-06-18,
 * tools, "Error Handling") says. The SDK loads on the first MCP request, not at start-up.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { echoed } from "../../errors.ts";
import type { AppEnv } from "../../gateway/context.ts";
import type { Dispatch, NativeError } from "../dispatch.ts";
import { earlyAnswer, joinBatch } from "./early.ts";
import { nativeRequest, type Tool } from "./tools.ts";

export const SERVER_INFO = { name: "quarry", title: "Quarry" };
export const INSTRUCTIONS =
  "Quarry searches the web, reads pages, finds videos and community discussions, and writes cited research reports. Start with search to find pages, scrape to read one, research for questions that need several sources.";

/** What a tool call answers: the native body as JSON text (and structured), or the native error. */
export function toolResult(ok: boolean, payload: unknown): CallToolResult {
  if (!ok) {
    const error = payload as NativeError;
    return {
      isError: true,
      content: [{ type: "text", text: `${error.code}: ${error.message} (request ${error.request_id})` }],
      structuredContent: { error },
    };
  }
  return {
    content: [{ type: "text", text: JSON.stringify(payload) }],
    ...(payload && typeof payload === "object" && !Array.isArray(payload) ? { structuredContent: payload as Record<string, unknown> } : {}),
  };
}

/** The message of the -32602 answered for a tool this server does not have. */
export function unknownToolMessage(name: string): string {
  return `Unknown tool: ${echoed(name)}; call tools/list for the tools this server has.`;
}

export async function callTool(dispatch: Dispatch, c: Context<AppEnv>, tool: Tool, args: Record<string, unknown>): Promise<CallToolResult> {
  const call = nativeRequest(tool, args);
  if ("problems" in call) {
    const first = call.problems[0]!;
    return toolResult(false, { code: "invalid_request", message: `${first.field}: ${first.message}`, request_id: c.get("requestId") ?? "", details: call.problems });
  }
  const { path, body } = call;
  const answer = await dispatch(c, { method: tool.route.method, path, body, authorization: c.req.header("authorization") });
  return answer.ok ? toolResult(true, answer.body) : toolResult(false, answer.error);
}

type Sdk = Awaited<ReturnType<typeof loadSdk>>;
type McpServer = InstanceType<Sdk["Server"]>;

function loadSdk() {
  return Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]).then(([server, transport, types]) => ({ Server: server.Server, Transport: transport.WebStandardStreamableHTTPServerTransport, types }));
}

/**
 * MCP servers answer one HTTP request at a time, each with a fresh transport (the stateless
 * mode). Building a server costs milliseconds (its schemas), so idle ones are kept for the next
 * request; the request being answered is what their tool handler dispatches for.
 */
export class McpEndpoint {
  private sdk: Promise<Sdk> | null = null;
  private idle: Array<{ server: McpServer; current: { c: Context<AppEnv> | null } }> = [];

  constructor(private readonly dispatch: Dispatch, private readonly tools: Tool[], private readonly version: string, private readonly maxBodyBytes: number, private readonly maxIdle = 16) {}

  private build(sdk: Sdk) {
    const current: { c: Context<AppEnv> | null } = { c: null };
    const server = new sdk.Server({ ...SERVER_INFO, version: this.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    server.setRequestHandler(sdk.types.ListToolsRequestSchema, async () => ({
      tools: this.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    }));
    server.setRequestHandler(sdk.types.CallToolRequestSchema, async (req) => {
      const tool = this.tools.find((t) => t.name === req.params.name);
      if (!tool) {
        // The SDK answers a thrown error's `code`, `message` and `data`; its McpError would prefix the message with "MCP error -32602: ".
        throw Object.assign(new Error(unknownToolMessage(req.params.name)), { code: sdk.types.ErrorCode.InvalidParams, data: { request_id: current.c!.get("requestId") ?? "" } });
      }
      return callTool(this.dispatch, current.c!, tool, req.params.arguments ?? {});
    });
    return { server, current };
  }

  /** Handles one Streamable HTTP POST. The SDK loads on the first one, not at start-up. */
  async handle(c: Context<AppEnv>): Promise<Response> {
    const early = await earlyAnswer(c.req.raw, this.maxBodyBytes);
    if (early && "answer" in early) return early.answer;
    const sdk = await (this.sdk ??= loadSdk());
    const entry = this.idle.pop() ?? this.build(sdk);
    entry.current.c = c;
    const transport = new sdk.Transport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: this.maxBodyBytes });
    await entry.server.connect(transport);
    try {
      if (early) return await joinBatch(await transport.handleRequest(early.forward), early.answers);
      return await transport.handleRequest(c.req.raw);
    } finally {
      await entry.server.close().catch(() => {});
      entry.current.c = null;
      if (this.idle.length < this.maxIdle) this.idle.push(entry);
    }
  }
}
