/** A throwaway PostgreSQL database per suite on the local server (127.0.0.1:5432), dropped afterwards. */
import pg from "pg";

export const PG_ADMIN_URL = process.env.QUARRY_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export async function tempDatabase(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `quarry_${label}_${process.pid}_${Date.now().toString(36)}`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      // Let pools that are closing finish their goodbyes first: FORCE on a connection mid-close
      // makes its client emit an error nobody is left to hear.
      for (let i = 0; i < 40; i++) {
        const { rows } = await c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [name]);
        if (rows[0].n === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
