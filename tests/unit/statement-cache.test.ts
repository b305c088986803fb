/**
 * The statement cache of the Deno SQLite connector (adapters/shared/statement-cache.ts): db0
 * prepares a statement per query, and on node:sqlite each held native memory until a GC, so RSS
 * grew ~4 KB per /health under load. Each SQL text must now be prepared once and reused, with its
 * parameters passed through and the results unchanged.
 */
import type { Connector } from "db0";
import { createDatabase } from "db0";
import { describe, expect, it } from "vitest";
import { cachedStatements } from "../../adapters/shared/statement-cache.ts";

function fakeSqlite() {
  const prepared: string[] = [];
  const rows = new Map<string, string>();
  const db = {
    prepare(sql: string) {
      prepared.push(sql);
      return {
        all: (...p: unknown[]) => (sql.startsWith("SELECT") ? [...rows].filter(([k]) => k === p[0]).map(([key, value]) => ({ key, value })) : []),
        get: (...p: unknown[]) => (rows.has(String(p[0])) ? { key: p[0], value: rows.get(String(p[0])) } : undefined),
        run: (...p: unknown[]) => (rows.set(String(p[0]), String(p[1])), { changes: 1 }),
      };
    },
  };
  const inner: Connector = {
    name: "fake", dialect: "sqlite", getInstance: () => db, exec: () => ({}),
    // db0's own connectors prepare anew on every call, as this one does.
    prepare: (sql) => {
      const s = db.prepare(sql);
      const st = { bind: () => st, all: async (...p: never[]) => s.all(...p), run: async (...p: never[]) => ({ success: true, ...s.run(...p) }), get: async (...p: never[]) => s.get(...p) };
      return st;
    },
  };
  return { inner, prepared };
}

describe("cached SQLite statements (Deno's connector)", () => {
  it("prepares each SQL text once however often it runs, and answers the same", async () => {
    const { inner, prepared } = fakeSqlite();
    const db = createDatabase(cachedStatements(inner));
    for (let i = 0; i < 500; i++) await db.sql`INSERT INTO kv (key, value) VALUES (${`k${i % 5}`}, ${`v${i}`})`;
    const { rows } = await db.sql`SELECT key, value FROM kv WHERE key = ${"k3"}`;
    expect(rows).toEqual([{ key: "k3", value: "v498" }]);
    expect(await db.prepare("SELECT key, value FROM kv WHERE key = ?").bind("k1").all()).toEqual([{ key: "k1", value: "v496" }]);
    expect(new Set(prepared).size).toBe(prepared.length); // no text prepared twice
    expect(prepared.length).toBeLessThanOrEqual(3);
  });

  it("keeps at most `max` statements, dropping the oldest", async () => {
    const { inner, prepared } = fakeSqlite();
    const c = cachedStatements(inner, 2);
    for (const sql of ["SELECT 1", "SELECT 2", "SELECT 3", "SELECT 1"]) await c.prepare(sql).get();
    expect(prepared).toEqual(["SELECT 1", "SELECT 2", "SELECT 3", "SELECT 1"]);
  });
});
