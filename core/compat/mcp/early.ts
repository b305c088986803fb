/**
 * JSON-RPC messages `POST /mcp` answers itself, before the SDK's transport sees them, because
 * the SDK would answer them wrongly:
 * - an empty batch `[]` is an Invalid Request (-32600), answered with one error (JSON-RPC 2.0);
 *   the SDK would take it for a batch of notifications (202);
 * - a `tools/call` whose `params.name` is not a string, or whose `params.arguments` is not an
 *   object, has invalid params (-32602); the SDK's schema check throws before its handler runs
 *   and is answered as an Internal error (-32603) whose message is the schema library's dump.
 *   Inside a batch too: those messages are answered here, and the rest of the batch goes on to
 *   the transport without them (`Early.forward`); the two answers are joined into one batch answer.
 */
import { readAllCapped } from "../../net/read-capped.ts";

type Id = string | number | null;

function rpcError(id: Id, code: number, message: string, status: number): Response {
  return Response.json({ jsonrpc: "2.0", id, error: { code, message } }, { status });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** What is wrong with a tools/call's params, or null when the SDK can take them. */
export function toolCallProblem(params: unknown): string | null {
  if (!isObject(params)) return "tools/call needs params: {name, arguments}.";
  if (typeof params.name !== "string") return "tools/call needs params.name, the tool's name as a string (see tools/list).";
  if (params.arguments !== undefined && !isObject(params.arguments)) return "tools/call params.arguments must be an object of the tool's arguments.";
  return null;
}

/** What to do before the transport: answer outright, or send it the rest of a batch and add these answers. */
export type Early = { answer: Response } | { forward: Request; answers: unknown[] };

/** Each message of a batch that this module answers, by its index, and its answer. */
function batchAnswers(batch: unknown[]): Map<number, unknown> {
  const answers = new Map<number, unknown>();
  batch.forEach((m, i) => {
    if (!isObject(m) || m.jsonrpc !== "2.0" || m.method !== "tools/call") return;
    if (typeof m.id !== "string" && typeof m.id !== "number") return;
    const problem = toolCallProblem(m.params);
    if (problem) answers.set(i, { jsonrpc: "2.0", id: m.id, error: { code: -32602, message: `Invalid params: ${problem}` } });
  });
  return answers;
}

/** The transport's refusals of the request itself (406, 415) come before any message's answer. */
function transportTakes(req: Request): boolean {
  const accept = req.headers.get("accept") ?? "";
  return /^application\/json\s*(;|$)/i.test(req.headers.get("content-type") ?? "") && accept.includes("application/json") && accept.includes("text/event-stream");
}

/**
 * Joins the transport's answer to the rest of a batch with the answers made here: one JSON array.
 * An answer that is not a batch's (a refusal of the whole request) is passed on as it is.
 */
export async function joinBatch(res: Response, answers: unknown[]): Promise<Response> {
  if (res.status === 202) return Response.json(answers, { status: 200 });
  if (res.status !== 200 || !/^application\/json/i.test(res.headers.get("content-type") ?? "")) return res;
  const theirs: unknown = await res.json();
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  return Response.json([...(Array.isArray(theirs) ? theirs : [theirs]), ...answers], { status: 200, headers });
}

/** The answer for a body the SDK would answer wrongly, or null to let the transport answer it. */
export async function earlyAnswer(req: Request, maxBytes: number): Promise<Early | null> {
  if (!req.body || Number(req.headers.get("content-length") ?? 0) > maxBytes) return null;
  let data: unknown;
  try {
    const raw = await readAllCapped(req.clone().body!, maxBytes, () => new Error("too large"));
    data = JSON.parse(new TextDecoder().decode(raw));
  } catch {
    return null; // not JSON, or too large: the transport's own answer
  }
  if (Array.isArray(data) && data.length === 0) return { answer: rpcError(null, -32600, "Invalid Request: an empty batch holds no message.", 400) };
  if (Array.isArray(data)) {
    const answers = batchAnswers(data);
    if (!answers.size || !transportTakes(req)) return null;
    const rest = data.filter((_, i) => !answers.has(i));
    if (!rest.length) return { answer: Response.json([...answers.values()], { status: 200 }) };
    const headers = new Headers(req.headers);
    headers.delete("content-length");
    return { forward: new Request(req.url, { method: req.method, headers, body: JSON.stringify(rest), signal: req.signal }), answers: [...answers.values()] };
  }
  if (!isObject(data) || data.jsonrpc !== "2.0" || data.method !== "tools/call") return null;
  if (!transportTakes(req)) return null;
  const id = data.id;
  // A notification is never answered; an id of another type is the transport's to refuse.
  if (typeof id !== "string" && typeof id !== "number") return null;
  const problem = toolCallProblem(data.params);
  return problem ? { answer: rpcError(id, -32602, `Invalid params: ${problem}`, 200) } : null;
}
