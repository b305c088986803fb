/**
 * Webhook deliveries (api.md §9): a JSON POST per event, signed with
 * `X-Quarry-Signature: sha256=<hex HMAC-SHA256 of the body with webhook.secret>`, through the
 * guarded page fetcher (a webhook URL that resolves to a private address is refused like any
 * other URL). A delivery that fails (network error, non-2xx) is retried with exponential backoff:
 * 5 attempts over about 15 s by default. Deliveries are kept in memory by the instance that saw
 * the event; they are not replayed after a restart.
 */
import type { Logger, PagePort } from "../ports.ts";
import type { JobRecord, WebhookEvent } from "./model.ts";

export interface WebhookOptions {
  attempts?: number;
  /** First retry delay; doubled after each failure. */
  backoffMs?: number;
  timeoutMs?: number;
}

export async function signBody(secret: string, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(body)));
  return `sha256=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export class Webhooks {
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly pages: PagePort, private readonly logger: Logger, private readonly opts: WebhookOptions = {}) {}

  /** Sends `event` for `job` if its webhook asks for it; returns at once (delivery runs on). */
  emit(job: JobRecord, event: WebhookEvent, data: Record<string, unknown>, now: number): void {
    const hook = job.spec.webhook;
    if (!hook || !hook.events.includes(event) || this.stopped) return;
    const body = JSON.stringify({ type: `${job.kind}.${event}`, id: job.id, timestamp: new Date(now).toISOString(), data });
    const p = this.deliver(hook.url, hook.secret, body, job.id, event).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async deliver(url: string, secret: string | null, body: string, jobId: string, event: string): Promise<void> {
    const attempts = this.opts.attempts ?? 5;
    let delay = this.opts.backoffMs ?? 1000;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (secret) headers["x-quarry-signature"] = await signBody(secret, body);
    for (let i = 1; i <= attempts && !this.stopped; i++) {
      let why: string;
      try {
        const res = await this.pages.fetchPage(url, { method: "POST", headers, body: new TextEncoder().encode(body), timeoutMs: this.opts.timeoutMs ?? 10_000 });
        if (res.status >= 200 && res.status < 300) return;
        why = `answered ${res.status}`;
      } catch (err) {
        why = err instanceof Error ? err.message : String(err);
      }
      this.logger.warn({ job_id: jobId, event, attempt: i, reason: why }, "webhook delivery failed");
      if (i < attempts) {
        await new Promise((r) => setTimeout(r, delay));
        delay *= 2;
      }
    }
  }

  /** Stops retrying and waits for deliveries under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.inFlight]);
  }
}
