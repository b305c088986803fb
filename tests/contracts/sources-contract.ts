/**
 * The SourceRegistry contract: every implementation (memory, SQLite, PostgreSQL) must pass it.
 * History recorded under a raw hostname must be what ranking finds under the bare host: once
 * the prior of every `www.` site stayed at its default forever (issue #17).
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { SourceRegistry } from "../../core/ports.ts";

let seq = 0;
const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);

export function sourcesContract(name: string, make: (now: () => number) => Promise<SourceRegistry>) {
  describe(`SourceRegistry contract: ${name}`, () => {
    let r: SourceRegistry;
    let now: number;
    // Stores may be shared between cases (one PostgreSQL database): every case has its own hosts.
    let site: string;
    beforeEach(async () => {
      now = T0;
      r = await make(() => now);
      site = `site${process.pid}x${seq++}.example`;
    });

    it("knows nothing of a host never recorded", async () => {
      expect(await r.get(site)).toBeNull();
    });

    it("counts sightings per backend and fetches by outcome, with first and last seen", async () => {
      await r.record(site, { backend: "duckduckgo" });
      now += 61_000;
      await r.record(site, { backend: "duckduckgo" });
      await r.record(site, { backend: "brave" });
      await r.record(site, { fetched: true, ok: true });
      await r.record(site, { fetched: true, ok: false });
      await r.record(site, { fetched: true, ok: true });
      expect(await r.get(site)).toEqual({
        hostname: site, seen: 3, backends: { duckduckgo: 2, brave: 1 }, fetch_ok: 2, fetch_failed: 1,
        first_seen: "2026-11-23T09:00:00Z", last_seen: "2026-11-23T09:01:01Z",
      });
    });

    it("one site's history whatever spelling of its host records or reads it (www., case, trailing dot)", async () => {
      await r.record(`www.${site}`, { fetched: true, ok: true });
      await r.record(`WWW.${site.toUpperCase()}.`, { fetched: true, ok: false });
      await r.record(site, { backend: "wikipedia" });
      for (const spelling of [site, `www.${site}`, `${site}.`, site.toUpperCase(), `Www.${site}`]) {
        expect(await r.get(spelling), spelling).toMatchObject({ hostname: site, seen: 1, fetch_ok: 1, fetch_failed: 1 });
      }
      // only `www.` at the start is the same site; other subdomains are their own
      expect(await r.get(`www2.${site}`)).toBeNull();
      expect(await r.get(`api.${site}`)).toBeNull();
    });

    it("keeps hosts apart whatever characters they hold", async () => {
      const hosts = [`${site}`, `${site}?x`, `${site}/x`, `${site}:8080`, `${site}\\x`, `[::1]`, `[::2]`, `xn--bcher-kva.${site}`, `bücher.${site}`, `${"a".repeat(60)}.${site}`];
      for (const [i, h] of hosts.entries()) {
        for (let n = 0; n <= i; n++) await r.record(h, { fetched: true, ok: true });
      }
      for (const [i, h] of hosts.entries()) expect((await r.get(h))?.fetch_ok, h).toBe(i + 1);
    });

    it("counts each site once", async () => {
      const before = await r.count();
      await r.record(`www.${site}`, { backend: "brave" });
      await r.record(site, { backend: "brave" });
      await r.record(`other.${site}`, { backend: "brave" });
      expect((await r.count()) - before).toBe(2);
    });
  });
}
