/**
 * The kinds of JavaScript pages a scraper meets, written here for `render: "auto"`: each page with
 * the decision auto should take (render in the browser or keep the static HTML) and a sentence of
 * its main text that the answer must hold (and, where it matters, one it must not). Served by
 * startCorpusSite() on 127.0.0.2; used by bench/render/auto.ts (figures) and
 * tests/render/auto-corpus.test.ts (assertions), both against a real Quarry server.
 */
import { createServer, type ServerResponse } from "node:http";

export interface CorpusPage {
  path: string;
  kind: string;
  /** What auto should do with the static HTML. */
  render: boolean;
  /** A sentence of the main text the answer must contain. */
  text: string;
  /** Text the answer must not contain (the placeholder a render replaces, a redirect's stub). */
  absent?: string;
}

const STORY = [
  "The ferry between the two islands stopped running in the autumn after the pier at the southern landing cracked.",
  "Fishermen carried the post across in their own boats for eleven weeks while engineers argued over the repair.",
  "When the new pier opened the whole village walked down to meet the first crossing, and the harbour master rang the old bell.",
  "Children who had never seen the bell used rang it again and again until the ferry captain asked them to stop.",
];
const paras = (prefix = "") => STORY.map((p) => `<p>${prefix}${p}</p>`).join("");
const NAV = `<header><a href="/">Island Herald</a><nav>${["News", "Weather", "Tides", "Ferries", "Events", "Letters", "Archive", "Shop", "Jobs", "About us", "Contact", "Subscribe"]
  .map((n) => `<a href="/${n.toLowerCase().replace(" ", "-")}">${n}</a>`).join(" ")}</nav></header>`;
const FOOTER = `<footer><p>The Island Herald is published every weekday by the Island Herald Cooperative, a member-owned newspaper serving the northern isles since 1911.</p>
  <p>Letters to the editor may be sent to the harbour office or left at any of our partner shops; we read every one and print a selection each Friday.</p>
  <ul>${["Privacy policy", "Terms of use", "Advertise with us", "Corrections", "Accessibility", "Careers", "Newsletter", "Site map"].map((n) => `<li><a href="/x">${n}</a></li>`).join("")}</ul>
  <p>Copyright the Island Herald Cooperative. All rights reserved.</p></footer>`;
const ANALYTICS = `<script async src="https://www.googletagmanager.com/gtag/js?id=G-TEST1"></script>
  <script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);} gtag("js", new Date()); gtag("config", "G-TEST1");</script>`;

function doc(body: string, head = ""): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Island Herald</title>${head}</head><body>${body}</body></html>`;
}
/** A script that writes the story into `#id` (from inline data, no request). */
const renderInto = (id: string, prefix = "") =>
  `document.getElementById(${JSON.stringify(id)}).innerHTML = ${JSON.stringify(`<h1>The ferry returns</h1>${paras(prefix)}`)};`;

const pages: Record<string, { html: string; page?: CorpusPage }> = {};
const js: Record<string, string> = {};
const json: Record<string, unknown> = {};

function add(page: CorpusPage, html: string): void {
  pages[page.path] = { html, page };
}

// 1. Client-rendered SPA: an empty root and a bundle that renders the article.
add({ path: "/spa", kind: "client-rendered SPA shell", render: true, text: STORY[1]! },
  doc(`<div id="root"></div><script src="/assets/bundle.js"></script>`));
js["/assets/bundle.js"] = renderInto("root");
// 2. Server-rendered with hydration: the text is in the HTML already.
add({ path: "/ssr", kind: "server-rendered page with hydration scripts", render: false, text: STORY[2]! },
  doc(`<div id="__next"><main><article><h1>The ferry returns</h1>${paras()}</article></main></div>
    <script id="__NEXT_DATA__" type="application/json">${JSON.stringify({ props: { pageProps: { slug: "ferry" } }, page: "/[slug]" })}</script>
    <script src="/assets/hydrate.js" defer></script>`));
js["/assets/hydrate.js"] = `document.documentElement.dataset.hydrated = "1";`;
// 3. A loading skeleton filled by fetch() from a JSON API.
add({ path: "/skeleton", kind: "loading skeleton filled by fetch()", render: true, text: STORY[0]!, absent: "Loading" },
  doc(`<header><a href="/">Island Herald</a></header><main id="story"><div class="skeleton" aria-busy="true">Loading…</div></main><script src="/assets/story.js"></script>`));
js["/assets/story.js"] = `fetch("/api/story").then((r) => r.json()).then((d) => { document.getElementById("story").innerHTML = "<article><h1>" + d.title + "</h1>" + d.paragraphs.map((p) => "<p>" + p + "</p>").join("") + "</article>"; });`;
json["/api/story"] = { title: "The ferry returns", paragraphs: STORY };
// 4. Next.js-like: the text is only in a JSON blob that the page's own code turns into HTML.
//    Rendering is the general answer: the blob's shape is the site's own, the page's script knows it.
add({ path: "/next-data", kind: "text in a __NEXT_DATA__ JSON blob, empty root", render: true, text: STORY[3]! },
  doc(`<div id="__next"></div>
    <script id="__NEXT_DATA__" type="application/json">${JSON.stringify({ props: { pageProps: { story: { title: "The ferry returns", body: STORY } } }, page: "/story" })}</script>
    <script src="/assets/next-app.js"></script>`));
js["/assets/next-app.js"] = `const d = JSON.parse(document.getElementById("__NEXT_DATA__").textContent).props.pageProps.story; document.getElementById("__next").innerHTML = "<article><h1>" + d.title + "</h1>" + d.body.map((p) => "<p>" + p + "</p>").join("") + "</article>";`;
// 5. Only a <noscript> notice in the static HTML; the mount point has an unusual name.
add({ path: "/noscript", kind: "noscript-only notice", render: true, text: STORY[1]!, absent: "enable JavaScript" },
  doc(`<noscript>You need to enable JavaScript to run this app.</noscript><div id="mount-point"></div><script src="/assets/mount.js"></script>`));
js["/assets/mount.js"] = renderInto("mount-point");
// 6. A cookie-consent overlay over a static article.
add({ path: "/cookies", kind: "cookie-consent overlay over static text", render: false, text: STORY[2]! },
  doc(`${NAV}<main><article><h1>The ferry returns</h1>${paras()}</article></main>
    <div id="consent" class="cookie-banner" role="dialog"><p>We use cookies to improve your experience.</p><button>Accept all</button><button>Reject</button></div>
    <script src="/assets/consent.js"></script>`));
js["/assets/consent.js"] = `document.querySelector("#consent button").addEventListener("click", () => document.getElementById("consent").remove());`;
// 7. Long static navigation and footer, but the article container is empty until a script fills it.
add({ path: "/chrome-only", kind: "long static nav/footer, empty article container", render: true, text: STORY[0]! },
  doc(`${NAV}<main><article id="article-body" class="story"></article></main>${FOOTER}<script src="/assets/article.js"></script>`));
js["/assets/article.js"] = `fetch("/api/story").then((r) => r.json()).then((d) => { document.getElementById("article-body").innerHTML = "<h1>" + d.title + "</h1>" + d.paragraphs.map((p) => "<p>" + p + "</p>").join(""); });`;
// 7b. An SPA root between a long static header and footer (no <main> or <article> in the HTML).
add({ path: "/spa-chrome", kind: "SPA root between long static nav/footer", render: true, text: STORY[3]! },
  doc(`${NAV}<div id="app"></div>${FOOTER.replace("</footer>", "<p>Our reporters cover council meetings, the lifeboat station, the schools, the fishing fleet and every ferry sailing, and we welcome tips from readers on any island.</p></footer>")}<script src="/assets/app.js"></script>`));
js["/assets/app.js"] = renderInto("app");
// 8a. Infinite scroll whose first page of items is in the HTML: static is right.
const ITEMS = ["Harbour dredging starts next month", "Ferry timetable for the winter season", "Lifeboat crew rescues stranded walkers", "New bakery opens on the quay", "School choir wins regional prize", "Storm damages the old boathouse"];
const itemHtml = (prefix: string) => ITEMS.map((t, i) => `<li class="item"><h2>${prefix}${t}</h2><p>Item ${i + 1}: the full report on ${t.toLowerCase()}, with comments from residents and the council.</p></li>`).join("");
add({ path: "/feed-static", kind: "infinite scroll, first page static", render: false, text: "Lifeboat crew rescues stranded walkers" },
  doc(`${NAV}<main><h1>Latest</h1><ul id="feed">${itemHtml("")}</ul></main><script src="/assets/more.js"></script>`));
js["/assets/more.js"] = `let n = 1; addEventListener("scroll", () => { if (n++ > 3) return; fetch("/api/feed?page=" + n).then((r) => r.json()).then((d) => { document.getElementById("feed").insertAdjacentHTML("beforeend", d.html); }); });`;
// 8b. Infinite scroll whose first page is fetched by the script too.
add({ path: "/feed-shell", kind: "infinite scroll, first page fetched", render: true, text: "Fresh: Lifeboat crew rescues stranded walkers" },
  doc(`<header><a href="/">Island Herald</a></header><main><h1>Latest</h1><ul id="feed"></ul></main><script src="/assets/feed.js"></script>`));
js["/assets/feed.js"] = `const load = (n) => fetch("/api/feed?page=" + n).then((r) => r.json()).then((d) => { document.getElementById("feed").insertAdjacentHTML("beforeend", d.html); }); load(1); let n = 1; addEventListener("scroll", () => { if (n < 4) load(++n); });`;
json["/api/feed"] = { html: itemHtml("Fresh: ") };
// 9. A client-side redirect: the stub says so, the text is on the page it goes to.
add({ path: "/moved", kind: "client-side redirect (location.replace)", render: true, text: STORY[2]!, absent: "Redirecting" },
  doc(`<p>Redirecting…</p><script>location.replace("/story-2024");</script>`));
pages["/story-2024"] = { html: doc(`<main><article><h1>The ferry returns</h1>${paras()}</article></main>`) };
// 10. A static article that merely loads analytics.
add({ path: "/analytics", kind: "static page with analytics scripts", render: false, text: STORY[3]! },
  doc(`${NAV}<main><article><h1>The ferry returns</h1>${paras()}</article></main>${FOOTER}`, ANALYTICS));
// 11. A short notice, static on purpose (with the site's analytics, as such pages have).
add({ path: "/notice", kind: "short static notice", render: false, text: "The harbour office is closed on Monday for the holiday." },
  doc(`<main><h1>Notice</h1><p>The harbour office is closed on Monday for the holiday.</p></main>`, ANALYTICS));
// 12. A short notice with a small first-party script (a menu toggle) that adds no text.
add({ path: "/notice-menu", kind: "short static notice with a menu script", render: false, text: "Tide tables for March are now posted at the quay." },
  doc(`<header><button id="menu">Menu</button></header><main><p>Tide tables for March are now posted at the quay.</p></main><script src="/assets/menu.js"></script>`));
js["/assets/menu.js"] = `document.getElementById("menu").addEventListener("click", () => document.body.classList.toggle("menu-open"));`;

export const CORPUS: CorpusPage[] = Object.values(pages).flatMap((p) => (p.page ? [p.page] : []));

export interface CorpusSite {
  url: string;
  close(): Promise<void>;
}

/** What a corpus site serves, by path (the query is ignored): HTML pages, scripts and JSON answers. */
export interface CorpusRoutes {
  pages: Record<string, { html: string; page?: CorpusPage }>;
  js: Record<string, string>;
  json: Record<string, unknown>;
}

/** Serves `routes` (this file's corpus unless given, as bench/render/corpus-blind.ts does). */
export async function startCorpusSite(host = "127.0.0.2", routes: CorpusRoutes = { pages, js, json }): Promise<CorpusSite> {
  const { pages, js, json } = routes;
  const send = (res: ServerResponse, type: string, body: string) => res.writeHead(200, { "content-type": type }).end(body);
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (pages[path]) return send(res, "text/html; charset=utf-8", pages[path].html);
    if (js[path] !== undefined) return send(res, "text/javascript", js[path]);
    if (json[path] !== undefined) return send(res, "application/json", JSON.stringify(json[path]));
    res.writeHead(404, { "content-type": "text/html" }).end("<p>not here</p>");
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  return {
    url: `http://${host}:${(server.address() as { port: number }).port}`,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

export interface CorpusResult {
  page: CorpusPage;
  status: number;
  rendered: boolean;
  /** The text holds the expected sentence and not the text it must not. */
  textOk: boolean;
  ms: number;
  text: string;
}

/**
 * Scrapes every corpus page with `render: "auto"` through a Quarry at `api`, one at a time. `query`
 * (say "?round=2") makes each URL new to Quarry's scrape cache; the site ignores it. `corpus` picks
 * another set of pages (the site must serve them).
 */
export async function scrapeCorpus(api: string, key: string, site: string, query = "", corpus: CorpusPage[] = CORPUS): Promise<CorpusResult[]> {
  const out: CorpusResult[] = [];
  for (const page of corpus) {
    const t0 = performance.now();
    const res = await fetch(`${api}/v1/scrape`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: site + page.path + query, formats: ["text"], render: "auto", timeout_ms: 20_000 }),
    });
    const body = (await res.json().catch(() => ({}))) as { data?: { text?: string }; meta?: { rendered?: boolean } };
    const ms = performance.now() - t0;
    const text = body.data?.text ?? "";
    const textOk = text.includes(page.text) && !(page.absent && text.includes(page.absent));
    out.push({ page, status: res.status, rendered: body.meta?.rendered === true, textOk, ms, text });
  }
  return out;
}
