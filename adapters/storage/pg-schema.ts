/**
 * PostgreSQL schema, applied under an advisory lock so that several instances starting at
 * once take turns (CREATE OR REPLACE FUNCTION run concurrently fails with "tuple
 * concurrently updated"). Every statement is idempotent.
 */
import { JOBS_PG_SCHEMA, JOBS_SCHEMA } from "../jobs/sql-store.ts";
import { COLLECTIONS_PG_SCHEMA } from "../collections/sql-store.ts";
import { READS_SCHEMA } from "../jobs/read-history.ts";
import { MONITORS_SCHEMA } from "../jobs/monitor-store.ts";

export const PG_MIGRATION_LOCK = 727_001; // any constant shared by all Quarry instances

export const PG_SCHEMA = `
CREATE TABLE IF NOT EXISTS quarry_kv (
  key VARCHAR(255) NOT NULL PRIMARY KEY, value TEXT, blob BYTEA,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

-- A version that changes on every write to accounts and keys, by any instance or the CLI:
-- instances serve key lookups from memory only while it stays the same.
CREATE TABLE IF NOT EXISTS quarry_meta (k TEXT PRIMARY KEY, v BIGINT NOT NULL);
INSERT INTO quarry_meta (k, v) VALUES ('keys_version', 0) ON CONFLICT (k) DO NOTHING;

CREATE OR REPLACE FUNCTION quarry_bump_keys_version() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF (TG_OP = 'DELETE' AND OLD.key ~ '^(account|key|keyhash|acctkey):')
     OR (TG_OP <> 'DELETE' AND NEW.key ~ '^(account|key|keyhash|acctkey):') THEN
    UPDATE quarry_meta SET v = v + 1 WHERE k = 'keys_version';
  END IF;
  RETURN NULL;
END $fn$;
DROP TRIGGER IF EXISTS quarry_kv_keys_changed ON quarry_kv;
CREATE TRIGGER quarry_kv_keys_changed AFTER INSERT OR UPDATE OR DELETE ON quarry_kv
  FOR EACH ROW EXECUTE FUNCTION quarry_bump_keys_version();

CREATE TABLE IF NOT EXISTS quarry_key_state (key_id TEXT PRIMARY KEY, total INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS quarry_window (key_id TEXT NOT NULL, ms BIGINT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (key_id, ms));
-- Redis mode's record of window hits, read only to re-seed an emptied Redis (kept apart from
-- quarry_window, whose running totals belong to quarry_admit).
CREATE TABLE IF NOT EXISTS quarry_window_log (key_id TEXT NOT NULL, ms BIGINT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (key_id, ms));
-- Reservations of metered requests not yet answered: they count toward the quota until
-- committed into quarry_usage or released; a dead instance's expire by themselves.
CREATE TABLE IF NOT EXISTS quarry_reservations (ticket TEXT PRIMARY KEY, key_id TEXT NOT NULL, period TEXT NOT NULL, expires_at BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS quarry_reservations_key ON quarry_reservations (key_id, period);
CREATE TABLE IF NOT EXISTS quarry_usage (key_id TEXT NOT NULL, period TEXT NOT NULL, grp TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (key_id, period, grp));
-- The same units per UTC day of admission (GET /v1/usage/daily), written in the same statement.
CREATE TABLE IF NOT EXISTS quarry_usage_daily (key_id TEXT NOT NULL, period TEXT NOT NULL, day TEXT NOT NULL, grp TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (key_id, period, day, grp));

-- One exact admission: the key's state row is locked, so concurrent admissions of one key,
-- from any instance, run one after another. p_now NULL = the database's clock (production).
DROP FUNCTION IF EXISTS quarry_admit(text, bigint, bigint, integer, text, text, integer);
CREATE OR REPLACE FUNCTION quarry_admit(p_key text, p_now bigint, p_window bigint, p_limit integer,
                                        p_period text, p_group text, p_quota integer,
                                        p_ticket text, p_ttl bigint)
RETURNS TABLE (ok boolean, reason text, retry_ms bigint, used integer) LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, (extract(epoch from clock_timestamp()) * 1000)::bigint);
  v_total integer;
  v_expired integer;
  v_used integer;
  v_excess integer;
  v_pending integer;
  r record;
BEGIN
  INSERT INTO quarry_key_state (key_id, total) VALUES (p_key, 0) ON CONFLICT (key_id) DO NOTHING;
  SELECT s.total INTO v_total FROM quarry_key_state s WHERE s.key_id = p_key FOR UPDATE;
  WITH d AS (DELETE FROM quarry_window w WHERE w.key_id = p_key AND w.ms <= v_now - p_window RETURNING w.n)
    SELECT coalesce(sum(d.n), 0) INTO v_expired FROM d;
  v_total := v_total - v_expired;
  DELETE FROM quarry_reservations q WHERE q.key_id = p_key AND q.expires_at <= v_now;
  -- One statement, one snapshot: a commit (which moves a unit from reservations to usage in one
  -- statement) is seen whole or not at all, so the sum below can never miss it in between.
  SELECT (SELECT coalesce(sum(u.n), 0) FROM quarry_usage u WHERE u.key_id = p_key AND u.period = p_period),
         (SELECT count(*) FROM quarry_reservations q WHERE q.key_id = p_key AND q.period = p_period)
    INTO v_used, v_pending;
  -- p_limit NULL: quota only (a job's pages), the window neither checked nor counted.
  IF p_limit IS NOT NULL AND v_total >= p_limit THEN
    UPDATE quarry_key_state SET total = v_total WHERE key_id = p_key;
    v_excess := v_total - p_limit + 1;
    FOR r IN SELECT w.ms, w.n FROM quarry_window w WHERE w.key_id = p_key ORDER BY w.ms LOOP
      v_excess := v_excess - r.n;
      IF v_excess <= 0 THEN
        RETURN QUERY SELECT false, 'rate_limited'::text, r.ms + p_window - v_now, v_used;
        RETURN;
      END IF;
    END LOOP;
    RETURN QUERY SELECT false, 'rate_limited'::text, 0::bigint, v_used;
    RETURN;
  END IF;
  IF p_group IS NOT NULL AND p_quota IS NOT NULL AND v_used + v_pending >= p_quota THEN
    UPDATE quarry_key_state SET total = v_total WHERE key_id = p_key;
    RETURN QUERY SELECT false, 'quota_exceeded'::text, 0::bigint, v_used + v_pending;
    RETURN;
  END IF;
  IF p_limit IS NOT NULL THEN
    INSERT INTO quarry_window AS w (key_id, ms, n) VALUES (p_key, v_now, 1)
      ON CONFLICT (key_id, ms) DO UPDATE SET n = w.n + 1;
    UPDATE quarry_key_state SET total = v_total + 1 WHERE key_id = p_key;
  ELSE
    UPDATE quarry_key_state SET total = v_total WHERE key_id = p_key;
  END IF;
  IF p_group IS NOT NULL THEN
    INSERT INTO quarry_reservations (ticket, key_id, period, expires_at) VALUES (p_ticket, p_key, p_period, v_now + p_ttl);
  END IF;
  RETURN QUERY SELECT true, NULL::text, 0::bigint, v_used;
END $fn$;

-- Site-level jobs (adapters/jobs/sql-store.ts): jobs, their frontiers and pages.
${JOBS_SCHEMA}
${JOBS_PG_SCHEMA}

-- Collections (adapters/collections/sql-store.ts): the accounts' own full-text indexes.
${COLLECTIONS_PG_SCHEMA}
-- Each account's last read of each URL, for change tracking (adapters/jobs/read-history.ts).
${READS_SCHEMA}
-- Monitors and their runs (adapters/jobs/monitor-store.ts).
${MONITORS_SCHEMA}
`;
