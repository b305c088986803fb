/**
 * The cost of the per-host gate: one acquire + release, one after another, in memory (one process)
 * and through PostgreSQL (several instances). `npx tsx bench/host-slots/run.ts` (needs PostgreSQL at
 * 127.0.0.1:5432, as the tests do).
 */
import pg from "pg";
import { tempDatabase } from "../../tests/helpers/pg.ts";
import { JOBS_PG_SCHEMA, JOBS_SCHEMA, SqlJobStore } from "../../adapters/jobs/sql-store.ts";
import { pgDriver } from "../../adapters/jobs/sql-drivers.ts";
import { SharedHostGate, HostGate } from "../../core/jobs/politeness.ts";
const t = await tempDatabase("slotbench");
const pool = new pg.Pool({ connectionString: t.url, max: 4 });
await pool.query(JOBS_SCHEMA + JOBS_PG_SCHEMA);
const store = new SqlJobStore(pgDriver(pool));
const N = 1000;
for (const [name, gate] of [["memory HostGate", new HostGate(2)], ["SharedHostGate on PostgreSQL", new SharedHostGate(store, 2, 30_000)]] as const) {
  const t0 = performance.now();
  for (let i = 0; i < N; i++) { const r = await gate.acquire(`h${i % 10}.test`); r(); }
  // let releases settle
  await new Promise((r) => setTimeout(r, 200));
  console.log(name, ((performance.now() - t0 - 200) / N).toFixed(3), "ms per acquire+release (sequential)");
}
await pool.end(); await t.drop();
