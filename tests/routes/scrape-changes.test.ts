/**
 * The `changes` format on POST /v1/scrape (issue #31 item 4): a read compared with this
 * account's previous read of the same URL, kept in the store (SQLite here), never another
 * account's, never a cached read; new → same → changed (with its diff) → removed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { startPageServer, type PageServer } from "../helpers/page-server.ts";

const article = (words: string) => `<!doctype html><html lang="en"><head><title>Release notes</title></head><body>
<nav><a href="/">Home</a></nav><main><article><h1>Release notes</h1>
<p>This page lists what changed in each release of the tool, newest first, with the reasons behind each change.</p>
<p>${words}</p>
<p>Older releases are described in the archive, which keeps every note since the first public version.</p>
</article></main></body></html>`;

let site: PageServer;
let t: TestApp;
let acme: string;
let other: string;
/** What the page serves now: its status and body. */
let page = { status: 200, body: article("Version 2 adds monitors that watch pages for you.") };
const scrape = (key: string, json: Record<string, unknown>) => t.request("/v1/scrape", { method: "POST", key, json });
const changesOf = async (key: string, extra: Record<string, unknown> = {}) => {
  const res = await scrape(key, { url: `${site.url}/notes`, formats: ["markdown", "changes"], ...extra });
  expect(res.status).toBe(200);
  return (await res.json()) as { meta: { cached: boolean; status_code: number }; data: { markdown?: string; changes: Record<string, unknown> | null } };
};

beforeAll(async () => {
  site = await startPageServer();
  site.route("/notes", (_req, res) => res.writeHead(page.status, { "content-type": "text/html; charset=utf-8" }).end(page.body));
  t = await makeApp({ storage: "sqlite", pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }) });
  acme = (await t.key("acme", ["scrape"])).secret;
  other = (await t.key("other", ["scrape"])).secret;
});
afterAll(async () => {
  await t?.close();
  await site?.close();
});

describe("changes on native scrape", () => {
  it("new, then same, then changed with a git-style diff of the markdown, then removed when the page 404s", async () => {
    const first = await changesOf(acme, { changes_options: { diff: true } });
    expect(first.data.changes).toEqual({ change_status: "new", previous_read_at: null, visibility: "visible", tag: null, diff: null });
    const firstAt = t.clock.now();

    await t.clock.advance(60_000);
    const same = await changesOf(acme, { changes_options: { diff: true } });
    expect(same.meta.cached).toBe(false);
    expect(same.data.changes).toEqual({ change_status: "same", previous_read_at: new Date(firstAt).toISOString(), visibility: "visible", tag: null, diff: "" });

    page = { status: 200, body: article("Version 3 adds change tracking to every scrape.") };
    await t.clock.advance(60_000);
    const changed = await changesOf(acme, { changes_options: { diff: true } });
    expect(changed.data.changes).toMatchObject({ change_status: "changed", previous_read_at: new Date(firstAt + 60_000).toISOString(), visibility: "visible" });
    const diff = changed.data.changes!.diff as string;
    expect(diff.split("\n").slice(0, 3)).toEqual(["diff --git a/markdown b/markdown", "--- a/markdown", "+++ b/markdown"]);
    expect(diff).toContain("\n-Version 2 adds monitors that watch pages for you.");
    expect(diff).toContain("\n+Version 3 adds change tracking to every scrape.");
    expect(changed.data.markdown).toContain("Version 3");

    // Without diff asked, none is given.
    await t.clock.advance(1000);
    expect((await changesOf(acme)).data.changes).toEqual({ change_status: "same", previous_read_at: new Date(firstAt + 120_000).toISOString(), visibility: "visible", tag: null });

    page = { status: 404, body: "<h1>Gone</h1>" };
    await t.clock.advance(1000);
    const removed = await changesOf(acme);
    expect(removed.meta.status_code).toBe(404);
    expect(removed.data.changes).toMatchObject({ change_status: "removed", visibility: "hidden" });

    // A server error is not compared and not kept: the next good read compares with the last kept one (the 404).
    page = { status: 503, body: "<h1>Busy</h1>" };
    expect((await changesOf(acme)).data.changes).toBeNull();
    page = { status: 200, body: article("Version 3 adds change tracking to every scrape.") };
    expect((await changesOf(acme)).data.changes).toMatchObject({ change_status: "changed", visibility: "visible" });
  });

  it("never compares with another account's reads; a tag is a series of its own", async () => {
    expect((await changesOf(other)).data.changes).toMatchObject({ change_status: "new", previous_read_at: null });
    expect((await changesOf(acme, { changes_options: { tag: "weekly" } })).data.changes).toMatchObject({ change_status: "new", tag: "weekly" });
    expect((await changesOf(acme, { changes_options: { tag: "weekly" } })).data.changes).toMatchObject({ change_status: "same", tag: "weekly" });
    expect((await changesOf(acme)).data.changes).toMatchObject({ change_status: "same", tag: null });
  });

  it("compares real reads: a cached plain read is not used, and max_age_ms does not serve one", async () => {
    page = { status: 200, body: article("Cached words that a plain scrape keeps for fifteen minutes.") };
    const plain = await scrape(acme, { url: `${site.url}/notes`, formats: ["markdown"] });
    expect(plain.status).toBe(200);
    page = { status: 200, body: article("Fresh words the page says now, after the plain read was cached.") };
    const hitsBefore = site.hits.length;
    const got = await changesOf(acme, { max_age_ms: 3_600_000, changes_options: { diff: true } });
    expect(site.hits.length).toBe(hitsBefore + 1);
    expect(got.meta.cached).toBe(false);
    expect(got.data.markdown).toContain("Fresh words");
    expect(got.data.changes).toMatchObject({ change_status: "changed" });
    // The plain scrape still gets its cached read (the changes read cached nothing of its own).
    const again = await (await scrape(acme, { url: `${site.url}/notes`, formats: ["markdown"] })).json();
    expect(again.meta.cached).toBe(true);
  });

  it("the changes format alone still answers the comparison, and is metered as one scrape", async () => {
    const before = (await (await t.request("/v1/usage", { key: other })).json()).used as number;
    const res = await scrape(other, { url: `${site.url}/notes`, formats: ["changes"] });
    const body = await res.json();
    expect(body.data.markdown).toBeUndefined();
    expect(body.data.changes).toMatchObject({ change_status: "changed" });
    expect((await (await t.request("/v1/usage", { key: other })).json()).used).toBe(before + 1);
  });

  it("refuses options without the format, and bad options, with a 400 naming the field", async () => {
    const a = await scrape(acme, { url: `${site.url}/notes`, changes_options: { diff: true } });
    expect(a.status).toBe(400);
    expect((await a.json()).error.message).toMatch(/changes_options needs the changes format/);
    const b = await scrape(acme, { url: `${site.url}/notes`, formats: ["changes"], changes_options: { tag: "x".repeat(101) } });
    expect(b.status).toBe(400);
    expect(JSON.stringify(await b.json())).toMatch(/changes_options.tag must be at most 100 characters/);
    const c = await scrape(acme, { url: `${site.url}/notes`, formats: ["changes"], changes_options: { modes: ["git-diff"] } });
    expect(c.status).toBe(400);
  });
});
