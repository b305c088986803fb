/**
 * GET /v1/crawl/{id}/events (and the batch one): the job as Server-Sent Events. Every page
 * recorded becomes a `page` event (in the order recorded), every change of the counts or the
 * status a `status` event; the stream ends after the status event of a finished job. It reads
 * the store, so it shows the work of every instance, and a client that reconnects with
 * `Last-Event-ID` (the page's sequence number) continues where it left off. A job that ends in
 * this process wakes its streams, so the end reaches the client as soon as it is stored. A
 * server that is stopping ends its streams after what they show then, instead of holding its
 * stop open for them.
 */
import type { Context } from "hono";
import { streamSSE, type SSEStreamingApi } from "hono/streaming";
import { errorBody, toApiError } from "../../errors.ts";
import type { AppEnv } from "../../gateway/context.ts";
import { TERMINAL, type JobKind } from "../../ports/job-model.ts";
import type { Services } from "../../services.ts";
import { ownJob, type Caller } from "./crawl.ts";

const POLL_MS = 250;

export async function jobEvents(c: Context<AppEnv>, services: Services, caller: Caller, kind: JobKind, id: string): Promise<Response> {
  await ownJob(services, caller, kind, id);
  const { store, changes } = services.jobs!;
  const last = Number(c.req.header("last-event-id") ?? "0");
  let seq = Number.isSafeInteger(last) && last > 0 ? last : 0; // past 2^53 it is no sequence number (and the store cannot take it)
  return streamSSE(c, async (stream) => {
    try {
      await follow(stream);
    } catch (err) {
      // The stream already answered 200: say what went wrong in it, and log it as any 500 is logged.
      // (Hono's own onError would also send the raw message as an event.)
      const requestId = c.get("requestId") ?? "req_unknown";
      services.jobs!.ports.logger.error({ req_id: requestId, err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, "internal_error");
      await stream.writeSSE({ event: "error", data: JSON.stringify(errorBody(toApiError(err), requestId)) });
    }
  });

  async function follow(stream: SSEStreamingApi): Promise<void> {
    let closed = false;
    stream.onAbort(() => void (closed = true));
    let shown = "";
    while (!closed) {
      // Taken before the reads: the job's end in this process wakes it at once (a poll of the
      // store every POLL_MS sees the rest: pages, counts, and the work of other instances).
      const woken = changes.next(id, POLL_MS);
      const job = await store.get(id);
      if (!job) break;
      // A page event says what was read, not the content: the pages are read without it.
      for (let pages = await store.pages(id, seq, 100, false); pages.length && !closed; pages = await store.pages(id, seq, 100, false)) {
        for (const p of pages) {
          await stream.writeSSE({ event: "page", id: String(p.seq), data: JSON.stringify({ url: p.url, status_code: p.statusCode, title: p.title, ...(p.error ? { error: p.error } : {}) }) });
          seq = p.seq;
        }
      }
      const status = { id: job.id, status: job.status, discovered: job.discovered, completed: job.completed, failed: job.failed, skipped: job.skipped, stopped_reason: job.stoppedReason };
      const text = JSON.stringify(status);
      if (text !== shown) {
        await stream.writeSSE({ event: "status", data: text });
        shown = text;
      }
      if (TERMINAL.has(job.status) && job.completed + job.failed <= seq) break;
      if (changes.closing) break; // the server is stopping: the client reconnects to a live one
      await woken;
    }
  }
}
