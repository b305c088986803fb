/** JobStore in process memory (tests, `QUARRY_DATA_DIR=:memory:`): nothing survives a restart. */
import type { JobStore } from "../../core/ports.ts";
import type { AccountLimits, CreateOutcome, Delivery, FinishOptions, JobFilter, ListedJob, WebhookFailure, WebhookTally } from "../../core/ports/jobs.ts";
import { rowBytes, STORAGE_FULL, utf8Bytes } from "../../core/jobs/sizes.ts";
import type { FinishResult, JobKind, JobRecord, JobStatus, JobTask, PageResult, SkippedUrl, StoredPage } from "../../core/ports/job-model.ts";

interface Entry {
  url: string;
  depth: number;
  state: "pending" | "active" | "done" | "failed" | "skipped";
  leaseUntil: number;
  reason?: string;
}

interface Held {
  job: JobRecord;
  frontier: Map<string, Entry>;
  pages: StoredPage[];
}

const clone = <T>(x: T): T => structuredClone(x);

export class MemoryJobStore implements JobStore {
  private readonly jobs = new Map<string, Held>();
  private readonly hosts = new Map<string, { nextStart: number; slots: Map<string, number> }>();
  private readonly slotHost = new Map<string, string>();
  private readonly deliveries = new Map<string, Delivery & { leaseUntil: number }>();
  /** Per job: deliveries made and given up, and the last failed attempt. */
  private readonly tallies = new Map<string, Omit<WebhookTally, "pending">>();
  /** Per account: the bytes its jobs hold. */
  private readonly accountBytes = new Map<string, number>();

  async create(job: JobRecord, seeds: JobTask[], skipped: SkippedUrl[], limits?: AccountLimits): Promise<CreateOutcome> {
    const held = this.accountBytes.get(job.account) ?? 0;
    if (limits) {
      if (limits.bytes !== null && held + (limits.room ?? 0) >= limits.bytes) {
        const expiries = [...this.jobs.values()].filter((h) => h.job.account === job.account && h.job.expiresAt !== null && (h.job.bytes ?? 0) > 0).map((h) => h.job.expiresAt!);
        return { created: false, reason: "storage_full", bytes: held, freesAt: expiries.length ? Math.min(...expiries) : null };
      }
      const active = [...this.jobs.values()].filter((h) => h.job.account === job.account && (h.job.status === "queued" || h.job.status === "running")).length;
      if (active >= limits.jobs) return { created: false, reason: "too_many_jobs", active };
    }
    const frontier = new Map<string, Entry>();
    for (const s of seeds) frontier.set(s.url, { url: s.url, depth: s.depth, state: "pending", leaseUntil: 0 });
    for (const s of skipped) if (!frontier.has(s.url)) frontier.set(s.url, { url: s.url, depth: 0, state: "skipped", leaseUntil: 0, reason: s.reason });
    const copy = clone(job);
    // Counts follow from the entries, as the SQL store derives them.
    copy.discovered = seeds.length;
    copy.skipped = [...frontier.values()].filter((e) => e.state === "skipped").length;
    copy.bytes = seeds.reduce((n, t) => n + rowBytes(t.url), 0) + skipped.reduce((n, t) => n + rowBytes(t.url, t.reason), 0);
    copy.dropped = { links: 0, contentBytes: 0, skippedUrls: 0, pages: 0 };
    this.accountBytes.set(job.account, held + copy.bytes);
    this.jobs.set(job.id, { job: copy, frontier, pages: [] });
    return { created: true };
  }

  async get(id: string): Promise<JobRecord | null> {
    const h = this.jobs.get(id);
    return h ? clone(h.job) : null;
  }

  async claim(task: JobTask, now: number, leaseMs: number): Promise<boolean> {
    const e = this.jobs.get(task.jobId)?.frontier.get(task.url);
    if (!e || !(e.state === "pending" || (e.state === "active" && e.leaseUntil < now))) return false;
    e.state = "active";
    e.leaseUntil = now + leaseMs;
    return true;
  }

  /** When each account and each job was last served a page (claimNext's fair order). */
  private readonly turns = new Map<string, number>();
  private turn = 0;

  async claimNext(now: number, leaseMs: number): Promise<JobTask | null> {
    const busy = new Map<string, number>();
    const waiting: Held[] = [];
    for (const h of this.jobs.values()) {
      if (h.job.status !== "queued" && h.job.status !== "running") continue;
      let pending = false;
      for (const e of h.frontier.values()) {
        if (e.state === "active") busy.set(h.job.account, (busy.get(h.job.account) ?? 0) + 1);
        else if (e.state === "pending") pending = true;
      }
      if (pending) waiting.push(h);
    }
    const order = (h: Held) => [busy.get(h.job.account) ?? 0, this.turns.get(`a:${h.job.account}`) ?? 0, h.job.account, this.turns.get(`j:${h.job.id}`) ?? 0, h.job.id] as const;
    waiting.sort((x, y) => {
      const [a, b] = [order(x), order(y)];
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
      return 0;
    });
    const h = waiting[0];
    if (!h) return null;
    let e: Entry | undefined;
    for (const x of h.frontier.values()) if (x.state === "pending" && (!e || x.depth < e.depth)) e = x;
    e!.state = "active";
    e!.leaseUntil = now + leaseMs;
    this.turns.set(`a:${h.job.account}`, ++this.turn);
    this.turns.set(`j:${h.job.id}`, this.turn);
    return { jobId: h.job.id, url: e!.url, depth: e!.depth };
  }

  async release(task: JobTask): Promise<void> {
    const e = this.jobs.get(task.jobId)?.frontier.get(task.url);
    if (e?.state === "active") (e.state = "pending"), (e.leaseUntil = 0);
  }

  async finish(task: JobTask, page: PageResult, found: JobTask[], skipped: SkippedUrl[], _now: number, opts?: FinishOptions): Promise<FinishResult> {
    const h = this.jobs.get(task.jobId);
    const e = h?.frontier.get(task.url);
    const none = { recorded: false, added: [], limited: false, remaining: h ? h.job.discovered - h.job.completed - h.job.failed : 0 };
    if (!h || !e || (h.job.status !== "queued" && h.job.status !== "running") || (e.state !== "pending" && e.state !== "active")) return none;
    const job = h.job;
    const dropped = (job.dropped ??= { links: 0, contentBytes: 0, skippedUrls: 0, pages: 0 });
    let pageBytes = utf8Bytes(JSON.stringify(page.data)) + rowBytes(page.title ?? "", page.error);
    const full = opts?.accountBytes != null && (this.accountBytes.get(job.account) ?? 0) + pageBytes > opts.accountBytes;
    if (full) {
      page = { url: page.url, ok: false, statusCode: page.statusCode, title: null, data: {}, error: STORAGE_FULL };
      found = [];
      skipped = [];
      pageBytes = rowBytes("", STORAGE_FULL);
      dropped.pages++;
    } else {
      dropped.links += opts?.droppedLinks ?? 0;
      dropped.contentBytes += opts?.cutBytes ?? 0;
    }
    let bytes = pageBytes;
    e.state = page.ok ? "done" : "failed";
    if (page.ok) job.completed++;
    else job.failed++;
    h.pages.push({ ...clone(page), seq: h.pages.length + 1 });
    const added: JobTask[] = [];
    let limited = false;
    for (const f of found) {
      if (h.frontier.has(f.url)) continue;
      if (job.discovered >= job.spec.limit) {
        limited = true;
        break;
      }
      h.frontier.set(f.url, { url: f.url, depth: f.depth, state: "pending", leaseUntil: 0 });
      job.discovered++;
      bytes += rowBytes(f.url);
      added.push(f);
    }
    for (const s of skipped) {
      if (h.frontier.has(s.url)) continue;
      if (job.skipped >= (opts?.skippedUrls ?? Infinity)) {
        dropped.skippedUrls++;
        continue;
      }
      h.frontier.set(s.url, { url: s.url, depth: task.depth + 1, state: "skipped", leaseUntil: 0, reason: s.reason });
      job.skipped++;
      bytes += rowBytes(s.url, s.reason);
    }
    if (limited && !job.stoppedReason) job.stoppedReason = "limit_reached";
    job.status = "running";
    job.bytes = (job.bytes ?? 0) + bytes;
    this.accountBytes.set(job.account, (this.accountBytes.get(job.account) ?? 0) + bytes);
    return { recorded: true, added, limited, remaining: job.discovered - job.completed - job.failed, ...(full ? { full } : {}) };
  }

  async transition(id: string, from: JobStatus[], to: JobStatus, patch: { finishedAt?: number; expiresAt?: number; stoppedReason?: string | null }): Promise<boolean> {
    const h = this.jobs.get(id);
    if (!h || !from.includes(h.job.status)) return false;
    h.job.status = to;
    if (patch.finishedAt !== undefined) h.job.finishedAt = patch.finishedAt;
    if (patch.expiresAt !== undefined) h.job.expiresAt = patch.expiresAt;
    if (patch.stoppedReason !== undefined) h.job.stoppedReason = patch.stoppedReason as JobRecord["stoppedReason"];
    return true;
  }

  async pages(id: string, offset: number, limit: number, withData = true): Promise<StoredPage[]> {
    const pages = this.jobs.get(id)?.pages.slice(offset, offset + limit) ?? [];
    return withData ? clone(pages) : pages.map((p) => clone({ ...p, data: {} }));
  }

  async skippedUrls(id: string, limit: number): Promise<SkippedUrl[]> {
    const out: SkippedUrl[] = [];
    for (const e of this.jobs.get(id)?.frontier.values() ?? []) {
      if (out.length >= limit) break;
      if (e.state === "skipped") out.push({ url: e.url, reason: e.reason ?? "skipped" });
    }
    return out;
  }

  async unfinished(limit: number): Promise<JobTask[]> {
    const out: JobTask[] = [];
    for (const h of this.jobs.values()) {
      if (h.job.status !== "queued" && h.job.status !== "running") continue;
      for (const e of h.frontier.values()) {
        if (out.length >= limit) return out;
        if (e.state === "pending" || e.state === "active") out.push({ jobId: h.job.id, url: e.url, depth: e.depth });
      }
    }
    return out;
  }

  async active(): Promise<string[]> {
    return [...this.jobs.values()].filter((h) => h.job.status === "queued" || h.job.status === "running").map((h) => h.job.id);
  }

  async list(filter: JobFilter, limit: number): Promise<ListedJob[]> {
    return [...this.jobs.values()]
      .filter(({ job }) => (filter.account === undefined || job.account === filter.account) && (!filter.statuses || filter.statuses.includes(job.status)))
      .sort((a, b) => b.job.createdAt - a.job.createdAt || (a.job.id < b.job.id ? 1 : a.job.id > b.job.id ? -1 : 0))
      .slice(0, Math.max(0, limit))
      .map((h) => {
        const starts = [...h.frontier.values()].filter((e) => e.depth === 0 && e.state !== "skipped").map((e) => e.url).sort();
        return { ...clone(h.job), firstUrl: starts[0] ?? null };
      });
  }

  async activeCounts(): Promise<Array<{ kind: JobKind; status: "queued" | "running"; jobs: number }>> {
    const counts = new Map<string, { kind: JobKind; status: "queued" | "running"; jobs: number }>();
    for (const { job } of this.jobs.values()) {
      if (job.status !== "queued" && job.status !== "running") continue;
      const key = `${job.kind} ${job.status}`;
      const row = counts.get(key) ?? counts.set(key, { kind: job.kind, status: job.status, jobs: 0 }).get(key)!;
      row.jobs++;
    }
    return [...counts.values()];
  }

  async diskUsage(): Promise<{ database: number | null; jobs: number }> {
    let jobs = 0;
    for (const n of this.accountBytes.values()) jobs += n;
    return { database: null, jobs };
  }

  async purge(now: number): Promise<number> {
    let n = 0;
    for (const [id, h] of this.jobs) {
      if (h.job.expiresAt === null || h.job.expiresAt > now) continue;
      this.jobs.delete(id);
      this.tallies.delete(id);
      this.turns.delete(`j:${id}`);
      this.accountBytes.set(h.job.account, (this.accountBytes.get(h.job.account) ?? 0) - (h.job.bytes ?? 0));
      n++;
    }
    return n;
  }

  async renew(held: Array<{ task: JobTask; lease: number }>, until: number): Promise<boolean[]> {
    return held.map(({ task, lease }) => {
      const e = this.jobs.get(task.jobId)?.frontier.get(task.url);
      if (e?.state !== "active" || e.leaseUntil !== lease) return false;
      e.leaseUntil = until;
      return true;
    });
  }

  async requeueExpired(now: number, limit: number): Promise<JobTask[]> {
    const out: JobTask[] = [];
    for (const h of this.jobs.values()) {
      if (h.job.status !== "queued" && h.job.status !== "running") continue;
      for (const e of h.frontier.values()) {
        if (out.length >= limit) return out;
        if (e.state === "active" && e.leaseUntil < now) {
          e.state = "pending";
          e.leaseUntil = 0;
          out.push({ jobId: h.job.id, url: e.url, depth: e.depth });
        }
      }
    }
    return out;
  }

  async takeHostSlot(host: string, holder: string, slots: number, delayMs: number, now: number, leaseMs: number): Promise<number> {
    let h = this.hosts.get(host);
    if (!h) this.hosts.set(host, (h = { nextStart: 0, slots: new Map() }));
    for (const [k, until] of h.slots) if (until < now) (h.slots.delete(k), this.slotHost.delete(k));
    if (h.slots.size >= slots) return -1;
    if (h.nextStart > now) return h.nextStart - now;
    h.slots.set(holder, now + leaseMs);
    this.slotHost.set(holder, host);
    h.nextStart = now + delayMs;
    return 0;
  }

  async renewHostSlots(holders: string[], until: number): Promise<void> {
    for (const k of holders) {
      const h = this.hosts.get(this.slotHost.get(k) ?? "");
      if (h?.slots.has(k)) h.slots.set(k, until);
    }
  }

  async releaseHostSlot(holder: string): Promise<void> {
    const host = this.slotHost.get(holder);
    if (host === undefined) return;
    this.slotHost.delete(holder);
    this.hosts.get(host)?.slots.delete(holder);
  }

  async addDelivery(d: Delivery, leaseUntil: number): Promise<void> {
    this.deliveries.set(d.id, { ...d, leaseUntil });
  }

  async claimDeliveries(now: number, leaseUntil: number, limit: number): Promise<Delivery[]> {
    const out: Delivery[] = [];
    for (const d of this.deliveries.values()) {
      if (out.length >= limit) break;
      if (d.nextAt <= now && d.leaseUntil < now) {
        d.leaseUntil = leaseUntil;
        const { leaseUntil: _, ...rest } = d;
        out.push(rest);
      }
    }
    return out;
  }

  async dropDelivery(id: string): Promise<void> {
    this.deliveries.delete(id);
  }

  async retryDelivery(id: string, attempt: number, nextAt: number, failure: WebhookFailure): Promise<void> {
    const d = this.deliveries.get(id);
    if (!d) return;
    Object.assign(d, { attempt, nextAt, leaseUntil: 0 });
    this.count(d.jobId, 0, 0, failure);
  }

  async endDelivery(id: string, failure: WebhookFailure | null): Promise<void> {
    const d = this.deliveries.get(id);
    if (!d) return;
    this.deliveries.delete(id);
    this.count(d.jobId, failure ? 0 : 1, failure ? 1 : 0, failure);
  }

  private count(jobId: string, delivered: number, failed: number, failure: WebhookFailure | null): void {
    const t = this.tallies.get(jobId) ?? { delivered: 0, failed: 0, lastError: null };
    t.delivered += delivered;
    t.failed += failed;
    if (failure && (!t.lastError || failure.at >= t.lastError.at)) t.lastError = { ...failure };
    this.tallies.set(jobId, t);
  }

  async webhookTally(jobId: string): Promise<WebhookTally> {
    const t = this.tallies.get(jobId);
    let pending = 0;
    for (const d of this.deliveries.values()) if (d.jobId === jobId) pending++;
    return { delivered: t?.delivered ?? 0, pending, failed: t?.failed ?? 0, lastError: t?.lastError ? { ...t.lastError } : null };
  }

  async nextDeliveryAt(): Promise<number | null> {
    let min: number | null = null;
    for (const d of this.deliveries.values()) if (min === null || d.nextAt < min) min = d.nextAt;
    return min;
  }
}
