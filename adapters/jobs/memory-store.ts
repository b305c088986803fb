/** JobStore in process memory (tests, `QUARRY_DATA_DIR=:memory:`): nothing survives a restart. */
import type { JobStore } from "../../core/ports.ts";
import type { FinishResult, JobRecord, JobStatus, JobTask, PageResult, SkippedUrl, StoredPage } from "../../core/jobs/model.ts";

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

  async create(job: JobRecord, seeds: JobTask[], skipped: SkippedUrl[]): Promise<void> {
    const frontier = new Map<string, Entry>();
    for (const s of seeds) frontier.set(s.url, { url: s.url, depth: s.depth, state: "pending", leaseUntil: 0 });
    for (const s of skipped) if (!frontier.has(s.url)) frontier.set(s.url, { url: s.url, depth: 0, state: "skipped", leaseUntil: 0, reason: s.reason });
    const held = clone(job);
    // Counts follow from the entries, as the SQL store derives them.
    held.discovered = seeds.length;
    held.skipped = [...frontier.values()].filter((e) => e.state === "skipped").length;
    this.jobs.set(job.id, { job: held, frontier, pages: [] });
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

  async release(task: JobTask): Promise<void> {
    const e = this.jobs.get(task.jobId)?.frontier.get(task.url);
    if (e?.state === "active") (e.state = "pending"), (e.leaseUntil = 0);
  }

  async finish(task: JobTask, page: PageResult, found: JobTask[], skipped: SkippedUrl[], _now: number): Promise<FinishResult> {
    const h = this.jobs.get(task.jobId);
    const e = h?.frontier.get(task.url);
    const none = { recorded: false, added: [], limited: false, remaining: h ? h.job.discovered - h.job.completed - h.job.failed : 0 };
    if (!h || !e || (h.job.status !== "queued" && h.job.status !== "running") || (e.state !== "pending" && e.state !== "active")) return none;
    const job = h.job;
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
      added.push(f);
    }
    for (const s of skipped) {
      if (h.frontier.has(s.url)) continue;
      h.frontier.set(s.url, { url: s.url, depth: task.depth + 1, state: "skipped", leaseUntil: 0, reason: s.reason });
      job.skipped++;
    }
    if (limited && !job.stoppedReason) job.stoppedReason = "limit_reached";
    job.status = "running";
    return { recorded: true, added, limited, remaining: job.discovered - job.completed - job.failed };
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

  async pages(id: string, offset: number, limit: number): Promise<StoredPage[]> {
    return clone(this.jobs.get(id)?.pages.slice(offset, offset + limit) ?? []);
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

  async purge(now: number): Promise<number> {
    let n = 0;
    for (const [id, h] of this.jobs) if (h.job.expiresAt !== null && h.job.expiresAt <= now) (this.jobs.delete(id), n++);
    return n;
  }
}
