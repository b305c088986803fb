/**
 * JobStore on SQL: one implementation for SQLite (embedded) and PostgreSQL (several instances),
 * over a small driver (sql-drivers.ts). A job is a row of quarry_jobs; its frontier and its
 * pages are rows of quarry_frontier (state pending → active → done | failed, or skipped). Every
 * change of an entry is conditional on its state, inside a transaction that also updates the
 * job's counts, with the job's row locked on PostgreSQL (FOR UPDATE) and the whole database on
 * SQLite (BEGIN IMMEDIATE): a page is recorded once however many workers were handed it.
 */
import type { JobStore } from "../../core/ports.ts";
import type { AccountLimits, CreateOutcome, Delivery, FinishOptions, JobFilter, ListedJob, WebhookFailure, WebhookTally } from "../../core/ports/jobs.ts";
import { rowBytes, STORAGE_FULL, utf8Bytes } from "../../core/jobs/sizes.ts";
import type { FinishResult, JobKind, JobRecord, JobStatus, JobTask, PageResult, SkippedUrl, StoredPage } from "../../core/ports/job-model.ts";
import type { Query, RawSql, Row, SqlDriver } from "./sql-drivers.ts";

export const JOBS_SCHEMA = `
CREATE TABLE IF NOT EXISTS quarry_jobs (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, account TEXT NOT NULL, key_id TEXT NOT NULL, status TEXT NOT NULL,
  created_at BIGINT NOT NULL, finished_at BIGINT, deadline_at BIGINT NOT NULL, expires_at BIGINT,
  discovered INTEGER NOT NULL DEFAULT 0, completed INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
  skipped INTEGER NOT NULL DEFAULT 0, stopped_reason TEXT, lim INTEGER NOT NULL, spec TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS quarry_jobs_status ON quarry_jobs (status);
CREATE TABLE IF NOT EXISTS quarry_frontier (
  job_id TEXT NOT NULL, url TEXT NOT NULL, depth INTEGER NOT NULL, state TEXT NOT NULL, lease_until BIGINT,
  seq INTEGER, status_code INTEGER, title TEXT, data TEXT, error TEXT,
  PRIMARY KEY (job_id, url)
);
CREATE INDEX IF NOT EXISTS quarry_frontier_seq ON quarry_frontier (job_id, seq);
CREATE TABLE IF NOT EXISTS quarry_hosts (host TEXT PRIMARY KEY, next_start BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS quarry_host_slots (holder TEXT PRIMARY KEY, host TEXT NOT NULL, lease_until BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS quarry_host_slots_host ON quarry_host_slots (host);
CREATE TABLE IF NOT EXISTS quarry_webhooks (
  id TEXT PRIMARY KEY, job_id TEXT NOT NULL, event TEXT NOT NULL, body TEXT NOT NULL, attempt INTEGER NOT NULL,
  next_at BIGINT NOT NULL, lease_until BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS quarry_webhooks_next ON quarry_webhooks (next_at);
CREATE INDEX IF NOT EXISTS quarry_webhooks_job ON quarry_webhooks (job_id);
CREATE INDEX IF NOT EXISTS quarry_jobs_account ON quarry_jobs (account, status);
-- Per account (issue #28): when it was last served a page (several instances: the claim's fair
-- order), and the bytes its jobs' rows hold now (its plan's jobs_storage_bytes).
CREATE TABLE IF NOT EXISTS quarry_job_accounts (account TEXT PRIMARY KEY, turn BIGINT NOT NULL DEFAULT 0, bytes BIGINT NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS quarry_job_accounts_turn ON quarry_job_accounts (turn);
-- What became of a job's deliveries (its status shows it): a row from its first delivery made,
-- given up or failed once. Databases from before it get the table on start and count from then.
CREATE TABLE IF NOT EXISTS quarry_webhook_tally (
  job_id TEXT PRIMARY KEY, delivered INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
  error_event TEXT, error_at BIGINT, error TEXT
);
`;

/**
 * Columns quarry_jobs gained after its first version (issue #28), added to an older table as it
 * opens: when the job was last served a page (`turn`), the bytes its rows hold, and what its caps
 * dropped (links past the per-page cap, page content cut, skipped URLs not listed, pages not stored).
 */
export const JOB_COLUMNS_ADDED: Array<[string, string]> = [
  ["turn", "BIGINT NOT NULL DEFAULT 0"],
  ["bytes", "BIGINT NOT NULL DEFAULT 0"],
  ["dropped_links", "INTEGER NOT NULL DEFAULT 0"],
  ["cut_bytes", "BIGINT NOT NULL DEFAULT 0"],
  ["dropped_skips", "INTEGER NOT NULL DEFAULT 0"],
  ["dropped_pages", "INTEGER NOT NULL DEFAULT 0"],
];

/**
 * PostgreSQL only (after JOBS_SCHEMA, in the migrations): the added columns, and the indexes the
 * fair claim reads (several instances): each job's pending entries by depth, the entries claimed now.
 */
export const JOBS_PG_SCHEMA = `
${JOB_COLUMNS_ADDED.map(([name, type]) => `ALTER TABLE quarry_jobs ADD COLUMN IF NOT EXISTS ${name} ${type};`).join("\n")}
CREATE INDEX IF NOT EXISTS quarry_frontier_pending ON quarry_frontier (job_id, depth) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS quarry_frontier_active ON quarry_frontier (job_id) WHERE state = 'active';
`;

const ACTIVE_SQL = "('queued','running')";

function toJob(r: Row): JobRecord {
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    id: String(r.id), kind: r.kind as JobRecord["kind"], account: String(r.account), keyId: String(r.key_id), status: r.status as JobStatus,
    createdAt: Number(r.created_at), finishedAt: n(r.finished_at), deadlineAt: Number(r.deadline_at), expiresAt: n(r.expires_at),
    discovered: Number(r.discovered), completed: Number(r.completed), failed: Number(r.failed), skipped: Number(r.skipped),
    stoppedReason: (r.stopped_reason ?? null) as JobRecord["stoppedReason"], spec: JSON.parse(String(r.spec)),
    bytes: Number(r.bytes ?? 0),
    dropped: { links: Number(r.dropped_links ?? 0), contentBytes: Number(r.cut_bytes ?? 0), skippedUrls: Number(r.dropped_skips ?? 0), pages: Number(r.dropped_pages ?? 0) },
  };
}

/** Enqueues tasks inside the store's transaction (a queue engine that shares the database). */
export type EnqueueHook = (raw: RawSql, tasks: JobTask[]) => Promise<void>;

interface Finishing {
  args: [JobTask, PageResult, JobTask[], SkippedUrl[], FinishOptions | undefined];
  resolve: (r: FinishResult) => void;
  reject: (e: unknown) => void;
}

export class SqlJobStore implements JobStore {
  /** Claims held by this process, when it is the only one working on the file (SQLite). */
  private claims: Set<string> | null = null;
  /** Pages waiting for the next group transaction (SQLite), null when none is scheduled. */
  private finishing: Finishing[] | null = null;

  constructor(private readonly db: SqlDriver, private readonly enqueue?: EnqueueHook) {}

  /** Creates the tables. With `ownsAllWork` (SQLite: one server owns the file), entries left active by a dead process go back to pending. */
  async init(ownsAllWork: boolean): Promise<void> {
    // PostgreSQL gets the tables with the other migrations, under their advisory lock
    // (concurrent CREATE TABLE IF NOT EXISTS can fail there); SQLite has one owner.
    if (this.db.dialect === "sqlite") {
      await this.db.exec(JOBS_SCHEMA);
      const have = new Set((await this.db.query("SELECT name FROM pragma_table_info('quarry_jobs')")).map((r) => String(r.name)));
      for (const [name, type] of JOB_COLUMNS_ADDED) if (!have.has(name)) await this.db.exec(`ALTER TABLE quarry_jobs ADD COLUMN ${name} ${type}`);
    }
    if (ownsAllWork) {
      await this.db.query("UPDATE quarry_frontier SET state = 'pending', lease_until = NULL WHERE state = 'active'");
      // Webhook attempts under way died with it: their deliveries are due again at once.
      await this.db.query("UPDATE quarry_webhooks SET lease_until = 0 WHERE lease_until > 0");
      // One process does all the work, and a restart makes every claim pending again anyway:
      // claims live in memory, which saves a write transaction per page.
      this.claims = new Set();
    }
  }

  async create(job: JobRecord, seeds: JobTask[], skipped: SkippedUrl[], limits?: AccountLimits): Promise<CreateOutcome> {
    const bytes = seeds.reduce((n, t) => n + rowBytes(t.url), 0) + skipped.reduce((n, t) => n + rowBytes(t.url, t.reason), 0);
    return this.db.tx(async (q, raw): Promise<CreateOutcome> => {
      // The account's row is the lock its job creations take in turn (SQLite: the write transaction itself).
      await q("INSERT INTO quarry_job_accounts (account) VALUES (?) ON CONFLICT (account) DO NOTHING", [job.account]);
      const [a] = await q(`SELECT bytes FROM quarry_job_accounts WHERE account = ?${this.db.dialect === "pg" ? " FOR UPDATE" : ""}`, [job.account]);
      if (limits) {
        const held = Number(a!.bytes);
        if (limits.bytes !== null && held + (limits.room ?? 0) >= limits.bytes) {
          const [f] = await q("SELECT min(expires_at) AS at FROM quarry_jobs WHERE account = ? AND expires_at IS NOT NULL AND bytes > 0", [job.account]);
          return { created: false, reason: "storage_full", bytes: held, freesAt: f?.at === null || f?.at === undefined ? null : Number(f.at) };
        }
        const [c] = await q(`SELECT count(*) AS n FROM quarry_jobs WHERE account = ? AND status IN ${ACTIVE_SQL}`, [job.account]);
        if (Number(c!.n) >= limits.jobs) return { created: false, reason: "too_many_jobs", active: Number(c!.n) };
      }
      await q(
        `INSERT INTO quarry_jobs (id, kind, account, key_id, status, created_at, finished_at, deadline_at, expires_at, discovered, completed, failed, skipped, stopped_reason, lim, spec, bytes)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?)`,
        [job.id, job.kind, job.account, job.keyId, job.status, job.createdAt, job.finishedAt, job.deadlineAt, job.expiresAt, seeds.length, skipped.length, job.stoppedReason, job.spec.limit, JSON.stringify(job.spec), bytes],
      );
      await q("UPDATE quarry_job_accounts SET bytes = bytes + ? WHERE account = ?", [bytes, job.account]);
      await insertRows(q, this.db.dialect, job.id, seeds.map((s) => [s.url, s.depth, "pending", null]));
      await insertRows(q, this.db.dialect, job.id, skipped.map((s) => [s.url, 0, "skipped", s.reason]));
      if (this.enqueue && raw) await this.enqueue(raw, seeds);
      return { created: true };
    });
  }

  async get(id: string): Promise<JobRecord | null> {
    const [r] = await this.db.query("SELECT * FROM quarry_jobs WHERE id = ?", [id]);
    return r ? toJob(r) : null;
  }

  async claim(task: JobTask, now: number, leaseMs: number): Promise<boolean> {
    if (this.claims) {
      const id = `${task.jobId}\u0000${task.url}`;
      if (this.claims.has(id)) return false;
      const [row] = await this.db.query("SELECT state FROM quarry_frontier WHERE job_id = ? AND url = ?", [task.jobId, task.url]);
      if (row?.state !== "pending" || this.claims.has(id)) return false;
      this.claims.add(id);
      return true;
    }
    const rows = await this.db.query(
      "UPDATE quarry_frontier SET state = 'active', lease_until = ? WHERE job_id = ? AND url = ? AND (state = 'pending' OR (state = 'active' AND lease_until < ?)) RETURNING url",
      [now + leaseMs, task.jobId, task.url, now],
    );
    return rows.length > 0;
  }

  async claimNext(now: number, leaseMs: number): Promise<JobTask | null> {
    // The fair order, read without locks (a few rows: the active jobs that have a page waiting).
    const jobs = await this.db.query(
      `SELECT j.id, j.account FROM quarry_jobs j
         LEFT JOIN quarry_job_accounts a ON a.account = j.account
         LEFT JOIN (SELECT j2.account, count(*) AS n FROM quarry_frontier f2 JOIN quarry_jobs j2 ON j2.id = f2.job_id
                    WHERE f2.state = 'active' AND j2.status IN ${ACTIVE_SQL} GROUP BY j2.account) busy ON busy.account = j.account
       WHERE j.status IN ${ACTIVE_SQL} AND EXISTS (SELECT 1 FROM quarry_frontier f WHERE f.job_id = j.id AND f.state = 'pending')
       ORDER BY coalesce(busy.n, 0), coalesce(a.turn, 0), j.account, j.turn, j.id LIMIT 16`,
    );
    for (const j of jobs) {
      const jobId = String(j.id);
      const entry = await this.claimIn(jobId, now, leaseMs);
      if (!entry) continue; // taken meanwhile by another worker: the next job in the order
      // Served now: the account and the job go to the back of their lines. Separate statements,
      // holding no lock while they wait for one (a page being recorded holds the job's row).
      await this.db.query(
        `INSERT INTO quarry_job_accounts (account, turn) VALUES (?, (SELECT coalesce(max(turn), 0) + 1 FROM quarry_job_accounts))
         ON CONFLICT (account) DO UPDATE SET turn = excluded.turn`,
        [String(j.account)],
      );
      await this.db.query(
        `UPDATE quarry_jobs SET turn = (SELECT coalesce(max(j2.turn), 0) + 1 FROM quarry_jobs j2 WHERE j2.account = ? AND j2.status IN ${ACTIVE_SQL}) WHERE id = ?`,
        [String(j.account), jobId],
      );
      return { jobId, url: entry.url, depth: entry.depth };
    }
    return null;
  }

  /** The job's shallowest pending entry, claimed; null when it has none left to take. */
  private async claimIn(jobId: string, now: number, leaseMs: number): Promise<{ url: string; depth: number } | null> {
    if (this.claims) {
      // One owner: its claims live in memory, so entries it holds still read pending in the file.
      const rows = await this.db.query("SELECT url, depth FROM quarry_frontier WHERE job_id = ? AND state = 'pending' ORDER BY depth LIMIT ?", [jobId, this.claims.size + 1]);
      const row = rows.find((r) => !this.claims!.has(`${jobId}\u0000${String(r.url)}`));
      if (!row) return null;
      this.claims.add(`${jobId}\u0000${String(row.url)}`);
      return { url: String(row.url), depth: Number(row.depth) };
    }
    const [row] = await this.db.query(
      `UPDATE quarry_frontier SET state = 'active', lease_until = ?
       WHERE job_id = ? AND state = 'pending'
         AND url = (SELECT url FROM quarry_frontier WHERE job_id = ? AND state = 'pending' ORDER BY depth LIMIT 1${this.db.dialect === "pg" ? " FOR UPDATE SKIP LOCKED" : ""})
       RETURNING url, depth`,
      [now + leaseMs, jobId, jobId],
    );
    return row ? { url: String(row.url), depth: Number(row.depth) } : null;
  }

  async release(task: JobTask): Promise<void> {
    this.claims?.delete(`${task.jobId}\u0000${task.url}`);
    await this.db.query("UPDATE quarry_frontier SET state = 'pending', lease_until = NULL WHERE job_id = ? AND url = ? AND state = 'active'", [task.jobId, task.url]);
  }

  /**
   * On SQLite, the pages that finish while a transaction is waiting for its turn (one connection)
   * are recorded together, in one transaction, each in a savepoint of its own: one commit for
   * them all, as the counters do, and a page whose statements fail fails alone. Every caller is
   * answered after the commit, so a page reported recorded is in the file. PostgreSQL: one
   * transaction per page (rows are locked per job, and instances write concurrently).
   */
  async finish(task: JobTask, page: PageResult, found: JobTask[], skipped: SkippedUrl[], _now: number, opts?: FinishOptions): Promise<FinishResult> {
    this.claims?.delete(`${task.jobId}\u0000${task.url}`);
    if (this.db.dialect !== "sqlite") return this.db.tx((q, raw) => this.record(q, raw, task, page, found, skipped, opts));
    return new Promise((resolve, reject) => {
      const item: Finishing = { args: [task, page, found, skipped, opts], resolve, reject };
      if (this.finishing) return void this.finishing.push(item);
      const group = (this.finishing = [item]);
      const results: Array<{ ok: true; value: FinishResult } | { ok: false; err: unknown }> = [];
      this.db
        .tx(async (q) => {
          // Later pages start the next group, which waits for this one's commit.
          this.finishing = null;
          // A lone page needs no savepoint: if it fails, the whole transaction rolls back with it.
          if (group.length === 1) return void results.push({ ok: true, value: await this.record(q, undefined, ...group[0]!.args) });
          for (const { args } of group) {
            await q("SAVEPOINT finish_page");
            try {
              results.push({ ok: true, value: await this.record(q, undefined, ...args) });
              await q("RELEASE finish_page");
            } catch (err) {
              await q("ROLLBACK TO finish_page");
              await q("RELEASE finish_page");
              results.push({ ok: false, err });
            }
          }
        })
        .then(
          () => group.forEach((g, i) => {
            const r = results[i]!;
            if (r.ok) g.resolve(r.value);
            else g.reject(r.err);
          }),
          (err) => {
            if (this.finishing === group) this.finishing = null;
            for (const g of group) g.reject(err);
          },
        );
    });
  }

  private async record(q: Query, raw: RawSql | undefined, task: JobTask, page: PageResult, found: JobTask[], skipped: SkippedUrl[], opts?: FinishOptions): Promise<FinishResult> {
    const pg = this.db.dialect === "pg";
    const [j] = await q(`SELECT status, discovered, completed, failed, lim, skipped, account FROM quarry_jobs WHERE id = ?${pg ? " FOR UPDATE" : ""}`, [task.jobId]);
    const remaining = j ? Number(j.discovered) - Number(j.completed) - Number(j.failed) : 0;
    const none: FinishResult = { recorded: false, added: [], limited: false, remaining };
    if (!j || (j.status !== "queued" && j.status !== "running")) return none;
    const account = String(j.account);
    let data = JSON.stringify(page.data);
    let pageBytes = utf8Bytes(data) + rowBytes(page.title ?? "", page.error);
    let full = false;
    if (opts?.accountBytes !== null && opts?.accountBytes !== undefined) {
      // The account's row, locked after the job's (every recording takes them in that order).
      const [a] = await q(`SELECT bytes FROM quarry_job_accounts WHERE account = ?${pg ? " FOR UPDATE" : ""}`, [account]);
      if (Number(a?.bytes ?? 0) + pageBytes > opts.accountBytes) {
        // Full: the page is kept as a failure without its content (and costs nothing), and nothing it found is added.
        full = true;
        page = { url: page.url, ok: false, statusCode: page.statusCode, title: null, data: {}, error: STORAGE_FULL };
        found = [];
        skipped = [];
        data = "{}";
        pageBytes = rowBytes("", STORAGE_FULL);
      }
    }
    const seq = Number(j.completed) + Number(j.failed) + 1;
    const done = await q(
      `UPDATE quarry_frontier SET state = ?, seq = ?, status_code = ?, title = ?, data = ?, error = ?, lease_until = NULL
       WHERE job_id = ? AND url = ? AND state IN ('pending', 'active') RETURNING url`,
      [page.ok ? "done" : "failed", seq, page.statusCode, page.title, data, page.error, task.jobId, task.url],
    );
    if (!done.length) return none;
    const fresh = await unknownUrls(q, this.db.dialect, task.jobId, [...new Set(found.map((f) => f.url))]);
    const room = Math.max(0, Number(j.lim) - Number(j.discovered));
    const byUrl = new Map(found.map((f) => [f.url, f]));
    const added = fresh.slice(0, room).map((u) => byUrl.get(u)!);
    const limited = fresh.length > room;
    await insertRows(q, this.db.dialect, task.jobId, added.map((a) => [a.url, a.depth, "pending", null]));
    if (this.enqueue && raw) await this.enqueue(raw, added);
    const skipReasons = new Map(skipped.map((s) => [s.url, s.reason]));
    const unknownSkips = await unknownUrls(q, this.db.dialect, task.jobId, [...skipReasons.keys()]);
    // A job lists so many skipped URLs; past that they are counted, not kept.
    const newSkips = unknownSkips.slice(0, Math.max(0, (opts?.skippedUrls ?? Infinity) - Number(j.skipped)));
    await insertRows(q, this.db.dialect, task.jobId, newSkips.map((u) => [u, task.depth + 1, "skipped", skipReasons.get(u)!]));
    const bytes = pageBytes + added.reduce((n, t) => n + rowBytes(t.url), 0) + newSkips.reduce((n, u) => n + rowBytes(u, skipReasons.get(u)), 0);
    await q(
      `UPDATE quarry_jobs SET completed = completed + ?, failed = failed + ?, discovered = discovered + ?, skipped = skipped + ?, status = 'running',
         stopped_reason = CASE WHEN ? = 1 AND stopped_reason IS NULL THEN 'limit_reached' ELSE stopped_reason END,
         bytes = bytes + ?, dropped_links = dropped_links + ?, cut_bytes = cut_bytes + ?, dropped_skips = dropped_skips + ?, dropped_pages = dropped_pages + ?
       WHERE id = ?`,
      [
        page.ok ? 1 : 0, page.ok ? 0 : 1, added.length, newSkips.length, limited ? 1 : 0,
        bytes, full ? 0 : (opts?.droppedLinks ?? 0), full ? 0 : (opts?.cutBytes ?? 0), unknownSkips.length - newSkips.length, full ? 1 : 0, task.jobId,
      ],
    );
    // A job from before accounts were counted has no row yet: its account starts counting here.
    const counted = await q("UPDATE quarry_job_accounts SET bytes = bytes + ? WHERE account = ? RETURNING account", [bytes, account]);
    if (!counted.length) await q("INSERT INTO quarry_job_accounts (account, bytes) VALUES (?, ?) ON CONFLICT (account) DO UPDATE SET bytes = quarry_job_accounts.bytes + excluded.bytes", [account, bytes]);
    return { recorded: true, added, limited, remaining: remaining + added.length - 1, ...(full ? { full } : {}) };
  }

  async transition(id: string, from: JobStatus[], to: JobStatus, patch: { finishedAt?: number; expiresAt?: number; stoppedReason?: string | null }): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE quarry_jobs SET status = ?, finished_at = coalesce(?, finished_at), expires_at = coalesce(?, expires_at),
         stopped_reason = CASE WHEN ? = 1 THEN ? ELSE stopped_reason END
       WHERE id = ? AND status IN (${from.map(() => "?").join(", ")}) RETURNING id`,
      [to, patch.finishedAt ?? null, patch.expiresAt ?? null, patch.stoppedReason !== undefined ? 1 : 0, patch.stoppedReason ?? null, id, ...from],
    );
    return rows.length > 0;
  }

  async pages(id: string, offset: number, limit: number, withData = true): Promise<StoredPage[]> {
    const rows = await this.db.query(
      `SELECT url, seq, state, status_code, title, ${withData ? "data" : "NULL AS data"}, error FROM quarry_frontier WHERE job_id = ? AND seq IS NOT NULL ORDER BY seq LIMIT ? OFFSET ?`,
      [id, limit, offset],
    );
    return rows.map((r) => ({
      url: String(r.url), seq: Number(r.seq), ok: r.state === "done", statusCode: Number(r.status_code ?? 0),
      title: (r.title ?? null) as string | null, data: r.data ? JSON.parse(String(r.data)) : {}, error: (r.error ?? null) as string | null,
    }));
  }

  async skippedUrls(id: string, limit: number): Promise<SkippedUrl[]> {
    const rows = await this.db.query("SELECT url, error FROM quarry_frontier WHERE job_id = ? AND state = 'skipped' LIMIT ?", [id, limit]);
    return rows.map((r) => ({ url: String(r.url), reason: String(r.error ?? "skipped") }));
  }

  async unfinished(limit: number): Promise<JobTask[]> {
    const rows = await this.db.query(
      `SELECT f.job_id, f.url, f.depth FROM quarry_frontier f JOIN quarry_jobs j ON j.id = f.job_id
       WHERE j.status IN ${ACTIVE_SQL} AND f.state IN ('pending', 'active') ORDER BY j.created_at, f.depth LIMIT ?`,
      [limit],
    );
    return rows.map((r) => ({ jobId: String(r.job_id), url: String(r.url), depth: Number(r.depth) }));
  }

  async active(): Promise<string[]> {
    return (await this.db.query(`SELECT id FROM quarry_jobs WHERE status IN ${ACTIVE_SQL}`)).map((r) => String(r.id));
  }

  async list(filter: JobFilter, limit: number): Promise<ListedJob[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.account !== undefined) {
      where.push("j.account = ?");
      args.push(filter.account);
    }
    if (filter.statuses) {
      where.push(filter.statuses.length ? `j.status IN (${filter.statuses.map(() => "?").join(", ")})` : "1 = 0");
      args.push(...filter.statuses);
    }
    // The URLs a job started from are its depth-0 entries (a batch's URLs), less those it skipped at once.
    const rows = await this.db.query(
      `SELECT j.*, (SELECT min(f.url) FROM quarry_frontier f WHERE f.job_id = j.id AND f.depth = 0 AND f.state <> 'skipped') AS first_url
       FROM quarry_jobs j ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY j.created_at DESC, j.id DESC LIMIT ?`,
      [...args, Math.max(0, limit)],
    );
    return rows.map((r) => ({ ...toJob(r), firstUrl: r.first_url === null || r.first_url === undefined ? null : String(r.first_url) }));
  }

  async activeCounts(): Promise<Array<{ kind: JobKind; status: "queued" | "running"; jobs: number }>> {
    // On the status index: reads only the active jobs' rows, however many finished ones are kept.
    const rows = await this.db.query(`SELECT kind, status, COUNT(*) AS n FROM quarry_jobs WHERE status IN ${ACTIVE_SQL} GROUP BY kind, status`);
    return rows.map((r) => ({ kind: String(r.kind) as JobKind, status: String(r.status) as "queued" | "running", jobs: Number(r.n) }));
  }

  async diskUsage(): Promise<{ database: number | null; jobs: number }> {
    const [d] = await this.db.query(
      this.db.dialect === "pg"
        ? "SELECT pg_database_size(current_database()) AS n"
        : "SELECT p.page_count * s.page_size AS n FROM pragma_page_count() p, pragma_page_size() s",
    );
    const [j] = await this.db.query("SELECT coalesce(sum(bytes), 0) AS n FROM quarry_job_accounts");
    return { database: d?.n === null || d?.n === undefined ? null : Number(d.n), jobs: Number(j?.n ?? 0) };
  }

  async purge(now: number): Promise<number> {
    return this.db.tx(async (q) => {
      // What the jobs held no longer counts toward their accounts' storage.
      await q(
        `UPDATE quarry_job_accounts SET bytes = bytes - (SELECT coalesce(sum(j.bytes), 0) FROM quarry_jobs j WHERE j.account = quarry_job_accounts.account AND j.expires_at IS NOT NULL AND j.expires_at <= ?)
         WHERE account IN (SELECT account FROM quarry_jobs WHERE expires_at IS NOT NULL AND expires_at <= ?)`,
        [now, now],
      );
      await q("DELETE FROM quarry_frontier WHERE job_id IN (SELECT id FROM quarry_jobs WHERE expires_at IS NOT NULL AND expires_at <= ?)", [now]);
      await q("DELETE FROM quarry_webhook_tally WHERE job_id IN (SELECT id FROM quarry_jobs WHERE expires_at IS NOT NULL AND expires_at <= ?)", [now]);
      return (await q("DELETE FROM quarry_jobs WHERE expires_at IS NOT NULL AND expires_at <= ? RETURNING id", [now])).length;
    });
  }

  async renew(held: Array<{ task: JobTask; lease: number }>, until: number): Promise<boolean[]> {
    const out: boolean[] = [];
    for (const { task, lease } of held) {
      const rows = await this.db.query(
        "UPDATE quarry_frontier SET lease_until = ? WHERE job_id = ? AND url = ? AND state = 'active' AND lease_until = ? RETURNING url",
        [until, task.jobId, task.url, lease],
      );
      out.push(rows.length > 0);
    }
    return out;
  }

  async requeueExpired(now: number, limit: number): Promise<JobTask[]> {
    return this.db.tx(async (q, raw) => {
      // The state is checked again by the UPDATE itself: of two instances doing this at once, one gets each entry.
      const rows = await q(
        `UPDATE quarry_frontier SET state = 'pending', lease_until = NULL
         WHERE (job_id, url) IN (SELECT f.job_id, f.url FROM quarry_frontier f JOIN quarry_jobs j ON j.id = f.job_id
                                 WHERE j.status IN ${ACTIVE_SQL} AND f.state = 'active' AND f.lease_until < ? LIMIT ?)
           AND state = 'active' AND lease_until < ?
         RETURNING job_id, url, depth`,
        [now, limit, now],
      );
      const tasks = rows.map((r) => ({ jobId: String(r.job_id), url: String(r.url), depth: Number(r.depth) }));
      if (tasks.length && this.enqueue && raw) await this.enqueue(raw, tasks);
      return tasks;
    });
  }

  async takeHostSlot(host: string, holder: string, slots: number, delayMs: number, now: number, leaseMs: number): Promise<number> {
    return this.db.tx(async (q) => {
      // The host's row is the lock every instance takes in turn (SQLite: the write transaction itself).
      await q("INSERT INTO quarry_hosts (host, next_start) VALUES (?, 0) ON CONFLICT (host) DO NOTHING", [host]);
      const [h] = await q(`SELECT next_start FROM quarry_hosts WHERE host = ?${this.db.dialect === "pg" ? " FOR UPDATE" : ""}`, [host]);
      await q("DELETE FROM quarry_host_slots WHERE host = ? AND lease_until < ?", [host, now]);
      const [c] = await q("SELECT count(*) AS n FROM quarry_host_slots WHERE host = ?", [host]);
      if (Number(c!.n) >= slots) return -1;
      const nextStart = Number(h!.next_start);
      if (nextStart > now) return nextStart - now;
      await q("INSERT INTO quarry_host_slots (holder, host, lease_until) VALUES (?, ?, ?)", [holder, host, now + leaseMs]);
      await q("UPDATE quarry_hosts SET next_start = ? WHERE host = ?", [now + delayMs, host]);
      return 0;
    });
  }

  async renewHostSlots(holders: string[], until: number): Promise<void> {
    for (const h of holders) await this.db.query("UPDATE quarry_host_slots SET lease_until = ? WHERE holder = ?", [until, h]);
  }

  async releaseHostSlot(holder: string): Promise<void> {
    await this.db.query("DELETE FROM quarry_host_slots WHERE holder = ?", [holder]);
  }

  async addDelivery(d: Delivery, leaseUntil: number): Promise<void> {
    await this.db.query(
      "INSERT INTO quarry_webhooks (id, job_id, event, body, attempt, next_at, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?)",
      [d.id, d.jobId, d.event, d.body, d.attempt, d.nextAt, leaseUntil],
    );
  }

  async claimDeliveries(now: number, leaseUntil: number, limit: number): Promise<Delivery[]> {
    const rows = await this.db.query(
      `UPDATE quarry_webhooks SET lease_until = ?
       WHERE id IN (SELECT id FROM quarry_webhooks WHERE next_at <= ? AND lease_until < ? ORDER BY next_at LIMIT ?) AND next_at <= ? AND lease_until < ?
       RETURNING id, job_id, event, body, attempt, next_at`,
      [leaseUntil, now, now, limit, now, now],
    );
    return rows.map((r) => ({ id: String(r.id), jobId: String(r.job_id), event: String(r.event), body: String(r.body), attempt: Number(r.attempt), nextAt: Number(r.next_at) }));
  }

  async dropDelivery(id: string): Promise<void> {
    await this.db.query("DELETE FROM quarry_webhooks WHERE id = ?", [id]);
  }

  async retryDelivery(id: string, attempt: number, nextAt: number, failure: WebhookFailure): Promise<void> {
    await this.db.tx(async (q) => {
      const [d] = await q("UPDATE quarry_webhooks SET attempt = ?, next_at = ?, lease_until = 0 WHERE id = ? RETURNING job_id", [attempt, nextAt, id]);
      if (d) await tally(q, String(d.job_id), 0, 0, failure);
    });
  }

  async endDelivery(id: string, failure: WebhookFailure | null): Promise<void> {
    await this.db.tx(async (q) => {
      // Of two holders ending it (the first one's lease ran out mid-attempt), one deletes the row and counts it.
      const [d] = await q("DELETE FROM quarry_webhooks WHERE id = ? RETURNING job_id", [id]);
      if (d) await tally(q, String(d.job_id), failure ? 0 : 1, failure ? 1 : 0, failure);
    });
  }

  async webhookTally(jobId: string): Promise<WebhookTally> {
    const [r] = await this.db.query(
      `SELECT t.delivered, t.failed, t.error_event, t.error_at, t.error, (SELECT count(*) FROM quarry_webhooks w WHERE w.job_id = ?) AS pending
       FROM (SELECT 1 AS one) o LEFT JOIN quarry_webhook_tally t ON t.job_id = ?`,
      [jobId, jobId],
    );
    const lastError = r?.error_at === null || r?.error_at === undefined ? null : { event: String(r.error_event), at: Number(r.error_at), error: String(r.error) };
    return { delivered: Number(r?.delivered ?? 0), pending: Number(r?.pending ?? 0), failed: Number(r?.failed ?? 0), lastError };
  }

  async nextDeliveryAt(): Promise<number | null> {
    const [r] = await this.db.query("SELECT min(next_at) AS at FROM quarry_webhooks");
    return r?.at === null || r?.at === undefined ? null : Number(r.at);
  }
}

/** Adds to a job's delivery counts; `failure` becomes its last error unless a later one is recorded. */
async function tally(q: Query, jobId: string, delivered: number, failed: number, failure: WebhookFailure | null): Promise<void> {
  const later = "excluded.error_at IS NOT NULL AND (quarry_webhook_tally.error_at IS NULL OR excluded.error_at >= quarry_webhook_tally.error_at)";
  await q(
    `INSERT INTO quarry_webhook_tally (job_id, delivered, failed, error_event, error_at, error) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (job_id) DO UPDATE SET delivered = quarry_webhook_tally.delivered + excluded.delivered, failed = quarry_webhook_tally.failed + excluded.failed,
       error_event = CASE WHEN ${later} THEN excluded.error_event ELSE quarry_webhook_tally.error_event END,
       error = CASE WHEN ${later} THEN excluded.error ELSE quarry_webhook_tally.error END,
       error_at = CASE WHEN ${later} THEN excluded.error_at ELSE quarry_webhook_tally.error_at END`,
    [jobId, delivered, failed, failure?.event ?? null, failure?.at ?? null, failure?.error ?? null],
  );
}

/**
 * The URLs of `urls` the job's frontier does not hold yet, in their order. One statement of
 * fixed text whatever the count (a JSON array on SQLite, an array on PostgreSQL), so no
 * statement is prepared per list length.
 */
async function unknownUrls(q: Query, dialect: SqlDriver["dialect"], jobId: string, urls: string[]): Promise<string[]> {
  if (!urls.length) return [];
  const rows = dialect === "sqlite"
    ? await q("SELECT url FROM quarry_frontier WHERE job_id = ? AND url IN (SELECT value FROM json_each(?))", [jobId, JSON.stringify(urls)])
    : await q("SELECT url FROM quarry_frontier WHERE job_id = ? AND url = ANY(?::text[])", [jobId, urls]);
  const known = new Set(rows.map((r) => String(r.url)));
  return urls.filter((u) => !known.has(u));
}

async function insertRows(q: Query, dialect: SqlDriver["dialect"], jobId: string, rows: Array<[string, number, string, string | null]>): Promise<void> {
  if (!rows.length) return;
  if (dialect === "sqlite") {
    await q(
      `INSERT INTO quarry_frontier (job_id, url, depth, state, error)
       SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]') FROM json_each(?) WHERE true ON CONFLICT (job_id, url) DO NOTHING`,
      [jobId, JSON.stringify(rows)],
    );
    return;
  }
  await q(
    `INSERT INTO quarry_frontier (job_id, url, depth, state, error)
     SELECT ?, u, d, s, e FROM unnest(?::text[], ?::int[], ?::text[], ?::text[]) AS t(u, d, s, e) ON CONFLICT (job_id, url) DO NOTHING`,
    [jobId, rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3])],
  );
}
