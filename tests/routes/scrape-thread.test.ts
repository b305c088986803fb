/**
 * POST /v1/scrape of a server-rendered forum thread, through the real guarded fetcher against a local
 * page server: every post comes back in the markdown, from the static HTML, without the user panels.
 * (A blind test found the posts dropped as teaser cards, the page then judged empty and rendered.)
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/extract/threads/${name}`, import.meta.url), "utf8");

describe("POST /v1/scrape of a discussion thread", () => {
  let site: PageServer;
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    site = await startPageServer();
    site.route("/threads/88121", send("text/html; charset=utf-8", fixture("xenforo.html")));
    site.route("/t/5521", send("text/html; charset=utf-8", fixture("discourse.html")));
    t = await makeApp({ pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }) });
    key = (await t.key("acme", ["scrape"])).secret;
  });
  afterAll(async () => {
    await t.close();
    await site.close();
  });

  const scrape = async (path: string) => {
    const res = await t.request("/v1/scrape", { method: "POST", key, json: { url: `${site.url}${path}`, formats: ["markdown"], render: "auto" } });
    expect(res.status).toBe(200);
    return res.json();
  };

  it("returns every post of a forum thread in order, statically, without the posters' panels", async () => {
    const body = await scrape("/threads/88121");
    expect(body.meta.rendered).toBe(false);
    const md: string = body.data.markdown;
    const posts = ["smells sharply of acetone", "It's hungry, not dying", "Rye ferments faster than wheat", "Switched to two feeds a day", "Bookmarking this"];
    const at = posts.map((p) => md.indexOf(p));
    expect(at.every((i) => i >= 0), md).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    for (const chrome of ["Joined", "Well-known member", "Baking since the last millennium"]) expect(md).not.toContain(chrome);
  });

  it("returns every post of a Discourse topic's crawler view, not only the first two", async () => {
    const md: string = (await scrape("/t/5521")).data.markdown;
    for (const p of ["We need to move a 2 TB", "sequences are not replicated", "Raise max", "Done over the weekend"]) expect(md).toContain(p);
    expect(md).not.toContain("Likes");
  });
});
