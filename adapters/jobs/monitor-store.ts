/**
 * MonitorStore (core/ports/monitors.ts) in memory and on SQL (SQLite and PostgreSQL through the job
 * store's driver). Every claim is a conditional UPDATE inside a transaction, so two instances
 * asking at once for the same due monitor or the same run see one of them win.
 */
import type { MonitorPatch, MonitorRecord, MonitorRun, MonitorStore, RunState } from "../../core/ports/monitors.ts";
import type { Row, SqlDriver } from "./sql-drivers.ts";

/** Part of the PostgreSQL migrations (pg-schema.ts) and of SQLite's start (init). */
export const MONITORS_SCHEMA = `
CREATE TABLE IF NOT EXISTS quarry_monitors (
  id TEXT PRIMARY KEY, account TEXT NOT NULL, key_id TEXT NOT NULL, name TEXT, kind TEXT NOT NULL, request TEXT NOT NULL,
  interval_ms BIGINT NOT NULL, webhook TEXT NOT NULL, paused INTEGER NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
  next_run_at BIGINT NOT NULL, last_run_at BIGINT
);
CREATE INDEX IF NOT EXISTS quarry_monitors_account ON quarry_monitors (account, id);
CREATE INDEX IF NOT EXISTS quarry_monitors_due ON quarry_monitors (paused, next_run_at);
CREATE TABLE IF NOT EXISTS quarry_monitor_runs (
  id TEXT PRIMARY KEY, monitor_id TEXT NOT NULL, account TEXT NOT NULL, state TEXT NOT NULL, lease_until BIGINT NOT NULL,
  due_at BIGINT NOT NULL, started_at BIGINT NOT NULL, finished_at BIGINT, job_id TEXT, outcome TEXT,
  pages INTEGER NOT NULL DEFAULT 0, changed INTEGER NOT NULL DEFAULT 0, detail TEXT
);
CREATE INDEX IF NOT EXISTS quarry_monitor_runs_monitor ON quarry_monitor_runs (monitor_id, id);
CREATE INDEX IF NOT EXISTS quarry_monitor_runs_state ON quarry_monitor_runs (state, lease_until);
`;

/** Runs kept per monitor: older ones are deleted as new ones start. */
export const RUNS_KEPT = 100;

const MONITOR_COLS = "id, account, key_id, name, kind, request, interval_ms, webhook, paused, created_at, updated_at, next_run_at, last_run_at";
const RUN_COLS = "id, monitor_id, account, state, lease_until, due_at, started_at, finished_at, job_id, outcome, pages, changed, detail";

const num = (v: unknown) => Number(v);
const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function toMonitor(r: Row): MonitorRecord {
  return {
    id: String(r.id), account: String(r.account), keyId: String(r.key_id), name: r.name === null ? null : String(r.name), kind: String(r.kind) as MonitorRecord["kind"],
    request: JSON.parse(String(r.request)), intervalMs: num(r.interval_ms), webhook: JSON.parse(String(r.webhook)), paused: num(r.paused) === 1,
    createdAt: num(r.created_at), updatedAt: num(r.updated_at), nextRunAt: num(r.next_run_at), lastRunAt: numOrNull(r.last_run_at),
  };
}

function toRun(r: Row): MonitorRun {
  return {
    id: String(r.id), monitorId: String(r.monitor_id), account: String(r.account), state: String(r.state) as RunState, leaseUntil: num(r.lease_until),
    dueAt: num(r.due_at), startedAt: num(r.started_at), finishedAt: numOrNull(r.finished_at), jobId: r.job_id === null ? null : String(r.job_id),
    outcome: r.outcome === null ? null : (String(r.outcome) as MonitorRun["outcome"]), pages: num(r.pages), changed: num(r.changed), detail: r.detail === null ? null : String(r.detail),
  };
}

const RUN_FIELDS: Record<string, string> = { state: "state", leaseUntil: "lease_until", jobId: "job_id", outcome: "outcome", pages: "pages", changed: "changed", detail: "detail", finishedAt: "finished_at" };

export class SqlMonitorStore implements MonitorStore {
  constructor(private readonly db: SqlDriver) {}

  /** SQLite creates its tables here; PostgreSQL gets them with the other migrations. */
  async init(): Promise<void> {
    if (this.db.dialect === "sqlite") await this.db.exec(MONITORS_SCHEMA);
  }

  private get lock(): string {
    return this.db.dialect === "pg" ? " FOR UPDATE" : "";
  }

  async create(m: MonitorRecord, cap: number | null) {
    return this.db.tx(async (q) => {
      // PostgreSQL: one account's creations take turns on an advisory lock of its name, so the count is exact.
      if (this.db.dialect === "pg") await q("SELECT pg_advisory_xact_lock(hashtext(?))", [`quarry_monitors:${m.account}`]);
      const [c] = await q("SELECT count(*) AS n FROM quarry_monitors WHERE account = ?", [m.account]);
      const count = Number(c?.n ?? 0);
      if (cap !== null && count >= cap) return { created: false as const, count };
      await q(
        `INSERT INTO quarry_monitors (${MONITOR_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [m.id, m.account, m.keyId, m.name, m.kind, JSON.stringify(m.request), m.intervalMs, JSON.stringify(m.webhook), m.paused ? 1 : 0, m.createdAt, m.updatedAt, m.nextRunAt, m.lastRunAt],
      );
      return { created: true as const };
    });
  }

  async get(id: string) {
    const [r] = await this.db.query(`SELECT ${MONITOR_COLS} FROM quarry_monitors WHERE id = ?`, [id]);
    return r ? toMonitor(r) : null;
  }

  async list(account: string) {
    return (await this.db.query(`SELECT ${MONITOR_COLS} FROM quarry_monitors WHERE account = ? ORDER BY id DESC`, [account])).map(toMonitor);
  }

  async update(id: string, patch: MonitorPatch, now: number) {
    const sets: string[] = ["updated_at = ?"];
    const args: unknown[] = [now];
    if (patch.name !== undefined) (sets.push("name = ?"), args.push(patch.name));
    if (patch.intervalMs !== undefined) (sets.push("interval_ms = ?"), args.push(patch.intervalMs));
    if (patch.webhook !== undefined) (sets.push("webhook = ?"), args.push(JSON.stringify(patch.webhook)));
    if (patch.paused !== undefined) (sets.push("paused = ?"), args.push(patch.paused ? 1 : 0));
    if (patch.nextRunAt !== undefined) (sets.push("next_run_at = ?"), args.push(patch.nextRunAt));
    const rows = await this.db.query(`UPDATE quarry_monitors SET ${sets.join(", ")} WHERE id = ? RETURNING ${MONITOR_COLS}`, [...args, id]);
    return rows[0] ? toMonitor(rows[0]) : null;
  }

  async delete(id: string) {
    return this.db.tx(async (q) => {
      const rows = await q("DELETE FROM quarry_monitors WHERE id = ? RETURNING id", [id]);
      await q("DELETE FROM quarry_monitor_runs WHERE monitor_id = ?", [id]);
      return rows.length > 0;
    });
  }

  async claimDue(now: number, leaseUntil: number, limit: number, runId: () => string) {
    const due = await this.db.query("SELECT id, next_run_at FROM quarry_monitors WHERE paused = 0 AND next_run_at <= ? ORDER BY next_run_at LIMIT ?", [now, limit]);
    const out: MonitorRun[] = [];
    for (const d of due) {
      const run = await this.db.tx(async (q) => {
        // The claim: only the instance whose update still sees the due time it read moves it on.
        const [m] = await q(
          "UPDATE quarry_monitors SET next_run_at = ? + interval_ms, last_run_at = ? WHERE id = ? AND next_run_at = ? AND paused = 0 RETURNING id, account",
          [now, now, d.id, d.next_run_at],
        );
        if (!m) return null;
        const [busy] = await q(`SELECT id FROM quarry_monitor_runs WHERE monitor_id = ? AND state <> 'done' LIMIT 1${this.lock}`, [d.id]);
        const r: MonitorRun = {
          id: runId(), monitorId: String(d.id), account: String(m.account), state: busy ? "done" : "starting", leaseUntil: busy ? 0 : leaseUntil,
          dueAt: Number(d.next_run_at), startedAt: now, finishedAt: busy ? now : null, jobId: null, outcome: busy ? "skipped" : null, pages: 0, changed: 0,
          detail: busy ? `the previous run (${String(busy.id)}) was still going` : null,
        };
        await q(`INSERT INTO quarry_monitor_runs (${RUN_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
          r.id, r.monitorId, r.account, r.state, r.leaseUntil, r.dueAt, r.startedAt, r.finishedAt, r.jobId, r.outcome, r.pages, r.changed, r.detail,
        ]);
        await q(
          `DELETE FROM quarry_monitor_runs WHERE monitor_id = ? AND state = 'done' AND id NOT IN (SELECT id FROM quarry_monitor_runs WHERE monitor_id = ? ORDER BY id DESC LIMIT ${RUNS_KEPT})`,
          [d.id, d.id],
        );
        return r;
      });
      if (run) out.push(run);
    }
    return out;
  }

  async claimRuns(state: "starting" | "settling", now: number, leaseUntil: number, limit: number) {
    // A read first: an idle server's tick (every few seconds) then asks SQLite for no write lock, so it
    // neither waits on another process's lock nor takes one while nothing is to be claimed.
    const any = await this.db.query("SELECT id FROM quarry_monitor_runs WHERE state = ? AND lease_until <= ? LIMIT 1", [state, now]);
    if (!any.length) return [];
    const rows = await this.db.query(
      `UPDATE quarry_monitor_runs SET lease_until = ?
       WHERE id IN (SELECT id FROM quarry_monitor_runs WHERE state = ? AND lease_until <= ? ORDER BY id LIMIT ?) AND state = ? AND lease_until <= ?
       RETURNING ${RUN_COLS}`,
      [leaseUntil, state, now, limit, state, now],
    );
    return rows.map(toRun);
  }

  async running(limit: number) {
    return (await this.db.query(`SELECT ${RUN_COLS} FROM quarry_monitor_runs WHERE state = 'running' ORDER BY id LIMIT ?`, [limit])).map(toRun);
  }

  async advance(id: string, from: RunState, patch: Parameters<MonitorStore["advance"]>[2]) {
    const entries = Object.entries(patch).filter(([, v]) => v !== undefined);
    const sets = entries.map(([k]) => `${RUN_FIELDS[k]} = ?`);
    const rows = await this.db.query(`UPDATE quarry_monitor_runs SET ${sets.join(", ")} WHERE id = ? AND state = ? RETURNING id`, [...entries.map(([, v]) => v), id, from]);
    return rows.length > 0;
  }

  async runs(monitorId: string, limit: number) {
    return (await this.db.query(`SELECT ${RUN_COLS} FROM quarry_monitor_runs WHERE monitor_id = ? ORDER BY id DESC LIMIT ?`, [monitorId, limit])).map(toRun);
  }
}

/** The same in memory (tests, demos): one process, so every step is already atomic. */
export class MemoryMonitorStore implements MonitorStore {
  private readonly monitors = new Map<string, MonitorRecord>();
  private readonly runRows = new Map<string, MonitorRun>();

  async create(m: MonitorRecord, cap: number | null) {
    const count = [...this.monitors.values()].filter((x) => x.account === m.account).length;
    if (cap !== null && count >= cap) return { created: false as const, count };
    this.monitors.set(m.id, structuredClone(m));
    return { created: true as const };
  }
  async get(id: string) {
    const m = this.monitors.get(id);
    return m ? structuredClone(m) : null;
  }
  async list(account: string) {
    return [...this.monitors.values()].filter((m) => m.account === account).sort((a, b) => (a.id < b.id ? 1 : -1)).map((m) => structuredClone(m));
  }
  async update(id: string, patch: MonitorPatch, now: number) {
    const m = this.monitors.get(id);
    if (!m) return null;
    Object.assign(m, Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)), { updatedAt: now });
    return structuredClone(m);
  }
  async delete(id: string) {
    for (const [k, r] of this.runRows) if (r.monitorId === id) this.runRows.delete(k);
    return this.monitors.delete(id);
  }
  async claimDue(now: number, leaseUntil: number, limit: number, runId: () => string) {
    const due = [...this.monitors.values()].filter((m) => !m.paused && m.nextRunAt <= now).sort((a, b) => a.nextRunAt - b.nextRunAt).slice(0, limit);
    const out: MonitorRun[] = [];
    for (const m of due) {
      const dueAt = m.nextRunAt;
      m.nextRunAt = now + m.intervalMs;
      m.lastRunAt = now;
      const busy = [...this.runRows.values()].find((r) => r.monitorId === m.id && r.state !== "done");
      const r: MonitorRun = {
        id: runId(), monitorId: m.id, account: m.account, state: busy ? "done" : "starting", leaseUntil: busy ? 0 : leaseUntil, dueAt, startedAt: now,
        finishedAt: busy ? now : null, jobId: null, outcome: busy ? "skipped" : null, pages: 0, changed: 0, detail: busy ? `the previous run (${busy.id}) was still going` : null,
      };
      this.runRows.set(r.id, r);
      const mine = [...this.runRows.values()].filter((x) => x.monitorId === m.id).sort((a, b) => (a.id < b.id ? 1 : -1));
      for (const old of mine.slice(RUNS_KEPT)) if (old.state === "done") this.runRows.delete(old.id);
      out.push({ ...r });
    }
    return out;
  }
  async claimRuns(state: "starting" | "settling", now: number, leaseUntil: number, limit: number) {
    const rows = [...this.runRows.values()].filter((r) => r.state === state && r.leaseUntil <= now).sort((a, b) => (a.id < b.id ? -1 : 1)).slice(0, limit);
    for (const r of rows) r.leaseUntil = leaseUntil;
    return rows.map((r) => ({ ...r }));
  }
  async running(limit: number) {
    return [...this.runRows.values()].filter((r) => r.state === "running").sort((a, b) => (a.id < b.id ? -1 : 1)).slice(0, limit).map((r) => ({ ...r }));
  }
  async advance(id: string, from: RunState, patch: Parameters<MonitorStore["advance"]>[2]) {
    const r = this.runRows.get(id);
    if (!r || r.state !== from) return false;
    Object.assign(r, Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)));
    return true;
  }
  async runs(monitorId: string, limit: number) {
    return [...this.runRows.values()].filter((r) => r.monitorId === monitorId).sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, limit).map((r) => ({ ...r }));
  }
}
