/**
 * Tavily's asynchronous research: `POST /research` starts a task and answers at once with its
 * `request_id`; `GET /research/{request_id}` answers 202 while it runs, then the report.
 *
 * The task is the native `POST /v1/research` with `stream: true`: its admission (key, scope,
 * limits, quota: one unit of the `research` group) happens before the stream starts, so a
 * refusal still answers the POST in Tavily's error shape; the stream is then read in the
 * background and its `result` stored (in the cache port, shared by every instance) for a day.
 */
import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../../gateway/context.ts";
import type { CachePort, Logger } from "../../ports.ts";
import { authorizationOf, type Dispatch } from "../dispatch.ts";
import { asIgnored, ignoredOptions, NativeFailure, readBody, secondsSince, type Ignored } from "../http.ts";
import { reportMarkdown, type NativeResearch } from "./report.ts";

const TTL_SECONDS = 24 * 3600;
const key = (id: string) => `compat:tavily:research:${id}`;

export const TavilyResearchBody = v.looseObject({
  input: v.string("input must be a string"),
  api_key: v.optional(v.nullable(v.string())),
  model: v.optional(v.nullable(v.picklist(["mini", "pro", "auto"], "model must be mini, pro or auto"))),
  citation_format: v.optional(v.nullable(v.string())),
});

const HONOURED = new Set(["input", "api_key", "model"]);

export interface ResearchTask {
  account: string;
  request_id: string;
  created_at: string;
  input: string;
  model: string;
  status: "pending" | "in_progress" | "completed" | "failed";
  completed_at?: string;
  content?: string;
  sources?: Array<{ title: string; url: string }>;
  error?: string;
  response_time?: number;
  ignored: Ignored[];
  native_meta?: unknown;
}

function events(text: string): Array<{ event: string; data: string }> {
  return text.split(/\r?\n\r?\n/).filter((b) => b.trim()).map((block) => {
    const lines = block.split(/\r?\n/);
    return {
      event: lines.find((l) => l.startsWith("event:"))?.slice(6).trim() ?? "message",
      data: lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n"),
    };
  });
}

export function tavilyResearch(dispatch: Dispatch, cache: CachePort, logger: Logger, now: () => number) {
  return async (c: Context<AppEnv>) => {
    const body = await readBody(c, TavilyResearchBody);
    const model = body.model ?? "mini";
    const native = { query: body.input, tier: model === "pro" ? "detailed" : "summary", stream: true };
    const answer = await dispatch(c, { method: "POST", path: "/v1/research", body: native, authorization: authorizationOf(c, body.api_key) });
    if (!answer.ok) throw new NativeFailure(answer.status, answer.error, answer.headers);
    const started = now();
    const task: ResearchTask = {
      account: c.get("auth")!.account.name,
      request_id: crypto.randomUUID(),
      created_at: new Date(started).toISOString(),
      input: body.input,
      model,
      status: "in_progress",
      ignored: asIgnored(ignoredOptions(body as Record<string, unknown>, HONOURED)),
    };
    await cache.set(key(task.request_id), task, TTL_SECONDS);
    const finish = async () => {
      const done: ResearchTask = { ...task };
      try {
        const all = events(await answer.response.text());
        const result = all.find((e) => e.event === "result");
        if (result) {
          const report = JSON.parse(result.data) as NativeResearch;
          Object.assign(done, { status: "completed", ...reportMarkdown(report), native_meta: report.meta });
        } else {
          const error = all.find((e) => e.event === "error");
          const message = error ? (JSON.parse(error.data) as { error: { message: string } }).error.message : "The research stream ended without a result.";
          Object.assign(done, { status: "failed", error: message });
        }
      } catch (err) {
        Object.assign(done, { status: "failed", error: "The research failed; the details are logged under this request id." });
        logger.error({ req_id: c.get("requestId"), err: String(err) }, "tavily research task");
      }
      // Stamped once the stream has ended: before it, completed_at was the task's creation time.
      const ended = now();
      Object.assign(done, { completed_at: new Date(ended).toISOString(), response_time: secondsSince(started, ended) });
      await cache.set(key(task.request_id), done, TTL_SECONDS).catch((err) => logger.error({ err: String(err) }, "could not store a research task"));
    };
    void finish();
    return c.json({
      request_id: task.request_id,
      created_at: task.created_at,
      status: "pending",
      input: task.input,
      model,
      response_time: secondsSince(c.get("startedAt") ?? started, now()),
      quarry: { ignored: task.ignored },
    });
  };
}

/** `GET /research/{id}`: any key of the task's account with the `research` scope; another account's id is a 404. */
export function tavilyGetResearch(dispatch: Dispatch, cache: CachePort, now: () => number) {
  return async (c: Context<AppEnv>) => {
    // Authenticated as the native usage read is (not metered), so a bad key answers as everywhere else.
    const who = await dispatch(c, { method: "GET", path: "/v1/usage", authorization: authorizationOf(c) });
    if (!who.ok) throw new NativeFailure(who.status, who.error, who.headers);
    const auth = c.get("auth")!;
    const requestId = c.get("requestId") ?? "";
    if (!auth.key.scopes.includes("research")) {
      throw new NativeFailure(403, { code: "insufficient_scope", message: 'This key lacks the "research" scope required to read research tasks.', request_id: requestId });
    }
    const task = await cache.get<ResearchTask>(key(c.req.param("request_id") ?? ""));
    if (!task || task.account !== auth.account.name) {
      throw new NativeFailure(404, { code: "not_found", message: "No research task with this id.", request_id: requestId });
    }
    const response_time = secondsSince(c.get("startedAt") ?? now(), now());
    if (task.status === "in_progress" || task.status === "pending") {
      return c.json({ request_id: task.request_id, status: task.status, response_time }, 202);
    }
    return c.json({
      request_id: task.request_id,
      created_at: task.created_at,
      completed_at: task.completed_at,
      status: task.status,
      content: task.content ?? "",
      sources: task.sources ?? [],
      response_time,
      ...(task.error ? { error: task.error } : {}),
      quarry: { ignored: task.ignored, meta: task.native_meta ?? null },
    });
  };
}
