/**
 * One MCP server for one HTTP request (the stateless Streamable HTTP mode: nothing is kept
 * between requests, so any instance can answer any request). tools/list answers from the route
 * table; tools/call sends the native request through the app with the caller's key, so it passes
 * the native endpoint's gateway; a refusal or failure is a tool error carrying code and message.
 * The SDK loads on the first MCP request, not at start-up.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import type { AppEnv } from "../../gateway/context.ts";
import type { Dispatch, NativeError } from "../dispatch.ts";
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

export async function callTool(dispatch: Dispatch, c: Context<AppEnv>, tools: Tool[], name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const tool = tools.find((t) => t.name === name);
  if (!tool) {
    return toolResult(false, { code: "not_found", message: `No tool named ${name}; call tools/list for the tools this server has.`, request_id: c.get("requestId") ?? "" });
  }
  const { path, body } = nativeRequest(tool, args);
  const answer = await dispatch(c, { method: tool.route.method, path, body, authorization: c.req.header("authorization") });
  return answer.ok ? toolResult(true, answer.body) : toolResult(false, answer.error);
}

/** Handles one Streamable HTTP POST with a fresh server and transport. */
export async function handleMcp(c: Context<AppEnv>, dispatch: Dispatch, tools: Tool[], version: string, maxBodyBytes: number): Promise<Response> {
  const [{ Server }, { WebStandardStreamableHTTPServerTransport }, { ListToolsRequestSchema, CallToolRequestSchema }] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  const server = new Server({ ...SERVER_INFO, version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => callTool(dispatch, c, tools, req.params.name, req.params.arguments ?? {}));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: maxBodyBytes });
  await server.connect(transport);
  try {
    return await transport.handleRequest(c.req.raw);
  } finally {
    await server.close().catch(() => {});
  }
}
