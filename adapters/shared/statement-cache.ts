/**
 * A db0 connector that keeps its prepared statements. db0's SQLite connectors prepare a new
 * statement for every query, which on Node (better-sqlite3) cost more than running it; on Deno (node:sqlite) each one holds native SQLite memory that only
 * a garbage collection of its small JavaScript wrapper frees, and V8 does not see that memory, so
 * RSS grew about 4 KB per `GET /health` under load (bench/RESULTS.md). unstorage's queries are a
 * handful of fixed SQL texts with bound parameters, so a small cache reuses one statement per
 * text. Statements run synchronously here (better-sqlite3, bun:sqlite, node:sqlite), so sharing one is safe.
 */
import type { Connector, Primitive, Statement } from "db0";

interface SyncStatement {
  all(...params: Primitive[]): unknown[];
  run(...params: Primitive[]): object;
  get(...params: Primitive[]): unknown;
}
interface SyncDatabase {
  prepare(sql: string): SyncStatement;
}

export function cachedStatements(inner: Connector, max = 64): Connector {
  const cache = new Map<string, SyncStatement>();
  // better-sqlite3's connector hands its database over in a promise, bun:sqlite's and node:sqlite's as is.
  let db: SyncDatabase | undefined;
  const opened = async () => (db ??= (await inner.getInstance()) as SyncDatabase);
  const statementFor = (sql: string): SyncStatement => {
    const hit = cache.get(sql);
    if (hit) return hit;
    const made = db!.prepare(sql);
    if (cache.size >= max) cache.delete(cache.keys().next().value!);
    cache.set(sql, made);
    return made;
  };
  const statement = (sql: string, bound: Primitive[] = []): Statement => {
    const args = (params: Primitive[]) => (params.length ? params : bound);
    return {
      bind: (...params) => statement(sql, params),
      all: async (...params) => (db ?? (await opened()), statementFor(sql).all(...args(params))),
      run: async (...params) => (db ?? (await opened()), { success: true, ...statementFor(sql).run(...args(params)) }),
      get: async (...params) => (db ?? (await opened()), statementFor(sql).get(...args(params))),
    };
  };
  return {
    ...inner,
    prepare: (sql) => statement(sql),
    dispose: () => {
      cache.clear();
      return inner.dispose?.();
    },
  };
}
