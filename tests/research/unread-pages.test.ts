/**
 * Research from a real server over HTTP, its search replayed (SearXNG linking to local pages,
 * the other engines failing): each source whose page could not be read is named in
 * meta.pages.unread with why, beside the counts, so a report resting on a snippet is known as such.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PageServer } from "../helpers/page-server.ts";
import type { Server } from "../helpers/server.ts";
import { startUnreadPagesRig, type UnreadPagesRig } from "../helpers/unread-pages.ts";

const ARTICLE = "<html><head><title>Why putty adhesive is reusable</title></head><body><article><h1>Why putty adhesive is reusable</h1><p>Putty adhesive is reusable because it is a pressure-sensitive adhesive that never cures: it stays soft and tacky.</p><p>Because it never hardens, putty adhesive can be peeled off a wall and pressed on again many times.</p></article></body></html>";

let rig: UnreadPagesRig;
let server: Server;
let site: PageServer;
let key: string;

beforeAll(async () => {
  rig = await startUnreadPagesRig({
    article: ARTICLE,
    query: "why is putty adhesive reusable",
    titles: ["Why putty adhesive is reusable", "Putty adhesive explained", "Putty adhesive on a wall"],
    snippets: ["Putty adhesive never cures.", "Putty adhesive stays soft, so it is reusable.", "A picture of reusable putty adhesive."],
    scope: "research",
  });
  ({ server, site, key } = rig);
}, 60_000);
afterAll(async () => {
  await rig?.close();
});

const research = async (body: unknown) => {
  const res = await fetch(`${server.url}/v1/research`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
};

describe("research: sources whose page was not read are named with why", () => {
  it("tier summary: the unreadable pages are listed by source id, url and reason; the read one is not", async () => {
    const { status, body } = await research({ query: "why is putty adhesive reusable" });
    expect(status).toBe(200);
    expect(body.meta.pages).toMatchObject({ read: 1, failed: 2, skipped: 0 });
    const byPath = Object.fromEntries(body.meta.pages.unread.map((u: { url: string; reason: string }) => [u.url.replace(site.url, ""), u.reason]));
    expect(byPath).toEqual({ "/gone": "the page answered HTTP 503", "/picture": "not an HTML page (image/png)" });
    // Each id is the source that carries that url.
    for (const u of body.meta.pages.unread) expect(body.sources.find((s: { id: string }) => s.id === u.id).url).toBe(u.url);
    expect(body.meta.backends.brave.status).toBe("error");
  });

  it("tier basic reads no page and lists none as unread", async () => {
    const { body } = await research({ query: "why is putty adhesive reusable at all", tier: "basic" });
    expect(body.meta.pages).toEqual({ read: 0, failed: 0, skipped: 0, unread: [] });
  });
});
