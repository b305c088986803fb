/**
 * Webhook deliveries (api.md §9): a JSON POST per event, signed with
 * `X-Quarry-Signature: sha256=<hex HMAC-SHA256 of the body with webhook.secret>`, through the
 * guarded page fetcher (a webhook URL that resolves to a private address is refused like any
 * other URL). A delivery that fails (network error, non-2xx) is retried with exponential backoff:
 * 5 attempts over about 15 s by default.
 *
 * Every delivery waits in the job store until it is delivered or given up, so a delivery pending
 * when the server is killed is made after the restart (or by another instance), and one already
 * delivered is not made again. The instance making an attempt holds the delivery under a lease;
 * a killed holder's lease runs out and the delivery is taken again. A receiver can still see a
 * delivery twice if the process dies between the receiver's answer and the store forgetting it:
 * `X-Quarry-Delivery` carries the same id on every attempt, for the receiver to drop repeats.
 *
 * The store also keeps each job's tally (delivered, given up, the last failed attempt's code), in
 * the same transaction that forgets a delivery, so the job's status tells its owner what the log
 * tells the operator, on every instance and after restarts.
 */
import type { Logger, Metrics, PagePort } from "../ports.ts";
import type { JobRecord, WebhookEvent } from "../ports/job-model.ts";
import type { Delivery, JobStore, WebhookFailure } from "../ports/jobs.ts";
import { failureCode } from "../net/fetch-errors.ts";

export interface WebhookOptions {
  attempts?: number;
  /** First retry delay; doubled after each failure. */
  backoffMs?: number;
  timeoutMs?: number;
  /** How long an attempt holds its delivery before another process may take it (longer than timeoutMs). */
  leaseMs?: number;
}

export async function signBody(secret: string, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(body)));
  return `sha256=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

type Hook = NonNullable<JobRecord["spec"]["webhook"]>;

export class Webhooks {
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  private paused = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAt = Infinity;
  private polling: Promise<void> | null = null;

  constructor(
    private readonly store: JobStore,
    private readonly pages: PagePort,
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly opts: WebhookOptions = {},
    private readonly metrics?: Metrics,
  ) {}

  private get timeoutMs(): number {
    return this.opts.timeoutMs ?? 10_000;
  }

  private get leaseMs(): number {
    return Math.max(this.opts.leaseMs ?? 60_000, this.timeoutMs + 5000);
  }

  /** Sends `event` for `job` if its webhook asks for it; returns at once (delivery runs on). */
  emit(job: JobRecord, event: WebhookEvent, data: Record<string, unknown>, now: number): void {
    const hook = job.spec.webhook;
    if (!hook || !hook.events.includes(event) || this.stopped) return;
    const body = JSON.stringify({ type: `${job.kind}.${event}`, id: job.id, timestamp: new Date(now).toISOString(), data });
    const d: Delivery = { id: crypto.randomUUID(), jobId: job.id, event, body, attempt: 0, nextAt: now };
    this.track(
      (async () => {
        // Stored first, held by this process for its first attempt.
        await this.store.addDelivery(d, this.now() + this.leaseMs);
        await this.attempt(d, hook);
      })().catch((err) => this.logger.warn({ job_id: job.id, event, err: err instanceof Error ? err.message : String(err) }, "webhook delivery not stored")),
    );
  }

  /**
   * Sends one event of `type` to the job's webhook whatever its `events` (a monitor's run, issue
   * #31), under the delivery id `id` (the same on every attempt, and on a repeat of this call
   * after a crash: the receiver can drop repeats). Resolves once the delivery is stored (its
   * attempts run on, retried like every delivery); a delivery of that id already stored is left as it is.
   */
  async send(job: JobRecord, type: string, id: string, data: Record<string, unknown>, now: number, subject = job.id): Promise<void> {
    const hook = job.spec.webhook;
    if (!hook || this.stopped) return;
    const body = JSON.stringify({ type, id: subject, timestamp: new Date(now).toISOString(), data });
    const d: Delivery = { id, jobId: job.id, event: type, body, attempt: 0, nextAt: now };
    try {
      await this.store.addDelivery(d, this.now() + this.leaseMs);
    } catch (err) {
      // Stored already (a holder that died after storing it): its lease brings it back to poll(). Any other failure is the caller's to retry.
      const text = `${err instanceof Error ? err.message : String(err)} ${err instanceof Error && err.cause ? String((err.cause as Error).message ?? err.cause) : ""}`;
      if (!/unique|duplicate/i.test(text)) throw err;
      this.logger.debug({ job_id: job.id, event: type, err: err instanceof Error ? err.message : String(err) }, "webhook delivery not stored again");
      return;
    }
    this.track(this.attempt(d, hook).catch((err) => this.logger.warn({ job_id: job.id, event: type, err: err instanceof Error ? err.message : String(err) }, "webhook delivery failed")));
  }

  private track(p: Promise<void>): void {
    const q = p.finally(() => this.inFlight.delete(q));
    this.inFlight.add(q);
  }

  /** Takes the deliveries due (this process's retries, or any a dead process left) and makes them; schedules the next look. */
  poll(): Promise<void> {
    if (this.stopped || this.paused) return Promise.resolve();
    this.polling ??= (async () => {
      try {
        for (;;) {
          const due = await this.store.claimDeliveries(this.now(), this.now() + this.leaseMs, 50);
          for (const d of due) this.track(this.attemptStored(d));
          if (due.length < 50) break;
        }
        const next = await this.store.nextDeliveryAt();
        if (next !== null) this.wake(next);
      } catch (err) {
        this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "webhook deliveries could not be read; retrying");
        this.wake(this.now() + 2000);
      } finally {
        this.polling = null;
      }
    })();
    return this.polling;
  }

  /** A look at the store at `at` (the earliest asked for wins); the timer never keeps the process alive. */
  private wake(at: number): void {
    if (this.stopped || this.paused || at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    const timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      void this.poll();
    }, Math.max(0, at - this.now()));
    (timer as { unref?: () => void }).unref?.();
    this.timer = timer;
  }

  /** A delivery taken from the store: its job gives the URL and secret (a job deleted since: dropped). */
  private async attemptStored(d: Delivery): Promise<void> {
    const job = await this.store.get(d.jobId);
    const hook = job?.spec.webhook;
    if (!hook) return this.store.dropDelivery(d.id);
    await this.attempt(d, hook);
  }

  private async attempt(d: Delivery, hook: Hook): Promise<void> {
    if (this.stopped) return; // left in the store: its lease runs out and it is made later
    const attempts = this.opts.attempts ?? 5;
    const headers: Record<string, string> = { "content-type": "application/json", "x-quarry-delivery": d.id };
    if (hook.secret) headers["x-quarry-signature"] = await signBody(hook.secret, d.body);
    const n = d.attempt + 1;
    let why: string;
    let code: string;
    try {
      const res = await this.pages.fetchPage(hook.url, { method: "POST", headers, body: new TextEncoder().encode(d.body), timeoutMs: this.timeoutMs });
      if (res.status >= 200 && res.status < 300) {
        await this.store.endDelivery(d.id, null);
        this.metrics?.webhookDelivery?.("delivered");
        this.logger.debug({ job_id: d.jobId, event: d.event, attempt: n }, "webhook delivered");
        return;
      }
      why = `answered ${res.status}`;
      code = `http_${res.status}`;
    } catch (err) {
      why = err instanceof Error ? err.message : String(err);
      code = failureCode(err);
    }
    this.logger.warn({ job_id: d.jobId, event: d.event, attempt: n, reason: why }, "webhook delivery failed");
    // The job's status shows the code, never `why` (a message may quote the URL, which may hold a token).
    const failure: WebhookFailure = { event: d.event, at: this.now(), error: code };
    if (n >= attempts) {
      await this.store.endDelivery(d.id, failure);
      this.metrics?.webhookDelivery?.("given_up");
      this.logger.warn({ job_id: d.jobId, event: d.event, attempts: n, reason: code }, "webhook delivery given up");
      return;
    }
    const nextAt = this.now() + (this.opts.backoffMs ?? 1000) * 2 ** (n - 1);
    await this.store.retryDelivery(d.id, n, nextAt, failure);
    this.metrics?.webhookDelivery?.("retried");
    this.wake(nextAt);
  }

  /**
   * The server is stopping: it takes no more deliveries from the store (its own retries included:
   * they wait there unheld, for another instance or the next start); attempts of events it still
   * emits go on.
   */
  pause(): void {
    this.paused = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
  }

  /** Resolves when the attempts under way (each event's first, and retries taken) have ended, without stopping. */
  async settled(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  /** Stops attempting (what is waiting stays in the store) and waits for attempts under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.polling?.catch(() => {});
    await Promise.allSettled([...this.inFlight]);
  }
}
