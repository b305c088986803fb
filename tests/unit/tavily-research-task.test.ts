/**
 * Tavily's research task is read from the native stream in the background; `completed_at` is
 * when that stream ended. It used to be stamped before the stream was read, so every task,
 * however long its research took, reported that it completed the moment it was created.
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { Dispatch } from "../../core/compat/dispatch.ts";
import { tavilyGetResearch, tavilyResearch, type ResearchTask } from "../../core/compat/tavily/research.ts";
import type { AppEnv } from "../../core/gateway/context.ts";
import type { CachePort, Logger } from "../../core/ports.ts";

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function memoryCache(): CachePort & { items: Map<string, unknown> } {
  const items = new Map<string, unknown>();
  return {
    items,
    async get<T>(key: string) { return (items.get(key) as T) ?? null; },
    async set(key: string, value: unknown) { items.set(key, structuredClone(value)); },
    async stats() { return { entries: items.size, bytes: 0 }; },
  };
}

describe("Tavily research task times", () => {
  it("completed_at is when the research stream ended, not when the task was created", async () => {
    let clock = Date.parse("2026-11-26T10:00:00.000Z");
    let finish!: () => void;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        finish = () => {
          const result = { meta: {}, report: { summary: "Compaction merges runs [1].", findings: [] }, sources: [{ id: 1, title: "LSM", url: "https://example.org/lsm" }] };
          controller.enqueue(new TextEncoder().encode(`event: result\ndata: ${JSON.stringify(result)}\n\n`));
          controller.close();
        };
      },
    });
    const dispatch: Dispatch = async () => ({ ok: true, status: 200, body: null, response: new Response(stream) });
    const cache = memoryCache();
    const app = new Hono<AppEnv>();
    app.use(async (c, next) => {
      c.set("requestId", "req_test");
      c.set("auth", { account: { name: "acme" }, key: { scopes: ["research"] } } as never);
      await next();
    });
    app.post("/research", tavilyResearch(dispatch, cache, silent, () => clock));
    app.get("/research/:request_id", tavilyGetResearch(async () => ({ ok: true, status: 200, body: {}, response: new Response("{}") }), cache, () => clock));

    const started = await (await app.request("/research", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ input: "how do LSM trees compact" }) })).json();
    expect(started.created_at).toBe("2026-11-26T10:00:00.000Z");

    clock += 42_000; // the research takes 42 s
    finish();
    let task: ResearchTask | null = null;
    for (let i = 0; i < 100 && task?.status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 10));
      task = (await cache.get<ResearchTask>(`compat:tavily:research:${started.request_id}`));
    }
    expect(task?.status).toBe("completed");
    expect(task?.completed_at).toBe("2026-11-26T10:00:42.000Z");
    expect(task?.response_time).toBe(42);

    const read = await (await app.request(`/research/${started.request_id}`)).json();
    expect(read).toMatchObject({ status: "completed", created_at: "2026-11-26T10:00:00.000Z", completed_at: "2026-11-26T10:00:42.000Z" });
  });
});
