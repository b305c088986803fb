/**
 * A real local website on 127.0.0.1 for map, crawl and batch tests (issue #13). One server
 * answers for three host names, told apart by the Host header:
 *   site.test       the site: ~40 pages in nested sections, robots.txt (a disallowed /private/
 *                   and a Crawl-delay), a sitemap index with a plain and a gzipped sitemap, a
 *                   redirect chain, a 404, a page that never answers and one that answers late
 *                   (/late?ms=N, linked from nowhere), a calendar trap, a query
 *                   string explosion, links to a private address, to a subdomain and another host;
 *   docs.site.test  a subdomain with two pages;
 *   other.test      another host.
 * Tests reach the names through a resolver that maps them to 127.0.0.1 (`siteResolver`), or use
 * the 127.0.0.1 address directly (then the Host is the address and the main site answers).
 * Every request is logged with its host, path, start and end, so politeness can be checked.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { gzipSync } from "node:zlib";

/**
 * The per-page timeout of the tests' whole-site crawls: /slow never answers and fails after it. Long
 * enough that an ordinary page of a loaded machine (four test files at once on two cores) is read in
 * it: at 2 s such pages timed out, went missing and fed the host's unreachable streak.
 */
export const PAGE_TIMEOUT_MS = 5000;

export interface Hit {
  host: string;
  path: string;
  start: number;
  end: number;
  ua: string;
  /** Who opened the connection, as `opts.whose` named it when the site accepted it. */
  by?: string;
}

export interface TestSite {
  /** http://site.test:PORT (needs siteResolver) */
  url: string;
  /** http://127.0.0.1:PORT: the same site by address */
  ipUrl: string;
  port: number;
  hits: Hit[];
  /** Paths fetched on the main site, in order. */
  paths(): string[];
  /** Most requests in flight at once to one host. */
  maxInFlight(host?: string): number;
  crawlDelay: number;
  close(): Promise<void>;
}

export const SECTIONS = { docs: ["intro", "install", "config", "api", "faq"], guides: ["start", "deploy", "scale", "backup"], blog: ["2024-launch", "2024-roadmap", "2025-release"] } as const;

/** The pages a polite full crawl of site.test should read (robots and traps aside). */
export function sitePagePaths(): string[] {
  const out = ["/", "/about", "/contact"];
  for (const [section, pages] of Object.entries(SECTIONS)) {
    out.push(`/${section}/`);
    for (const p of pages) {
      out.push(`/${section}/${p}`);
      out.push(`/${section}/${p}/details`, `/${section}/${p}/details/more`);
    }
  }
  return out;
}

const html = (title: string, body: string, links: string[]) =>
  `<!doctype html><html><head><title>${title}</title></head><body><nav>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</nav>` +
  `<main><article><h1>${title}</h1><p>${body}</p><p>This page is part of the Quarry test site. It has enough words to be read as an article by the extractor, with a second sentence about ${title.toLowerCase()}.</p></article></main></body></html>`;

export async function startTestSite(opts: { crawlDelay?: number; whose?: (clientPort: number, sitePort: number) => string | undefined } = {}): Promise<TestSite> {
  const crawlDelay = opts.crawlDelay ?? 0.05;
  const hits: Hit[] = [];
  let port = 0;
  const pages = new Map<string, { title: string; links: string[] }>();
  pages.set("/", { title: "Home", links: ["/about", "/contact", "/docs/", "/guides/", "/blog/", "/private/secret", "/old", "/missing", "/slow", "/calendar/2024/1", "/search?q=a&page=1", "http://10.0.0.1/admin", `http://docs.site.test:PORT/`, `http://other.test:PORT/`, "mailto:x@y.z", "/about#team", "/about?utm_source=x"] });
  pages.set("/about", { title: "About", links: ["/", "/contact"] });
  pages.set("/contact", { title: "Contact", links: ["/"] });
  for (const [section, list] of Object.entries(SECTIONS)) {
    pages.set(`/${section}/`, { title: `Section ${section}`, links: ["/", ...list.map((p) => `/${section}/${p}`)] });
    for (const p of list) {
      pages.set(`/${section}/${p}`, { title: `${section} ${p}`, links: [`/${section}/`, `/${section}/${p}/details`] });
      pages.set(`/${section}/${p}/details`, { title: `${section} ${p} details`, links: [`/${section}/${p}`, `/${section}/${p}/details/more`] });
      pages.set(`/${section}/${p}/details/more`, { title: `${section} ${p} more`, links: [`/${section}/${p}/details`] });
    }
  }
  pages.set("/docs/moved", { title: "Moved here", links: ["/"] });
  pages.set("/private/secret", { title: "Secret", links: [] });

  const robots = `User-agent: *\nDisallow: /private/\nCrawl-delay: ${crawlDelay}\n\nSitemap: ${"BASE"}/sitemap-index.xml\n`;
  const urlset = (paths: string[]) =>
    `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths.map((p) => `<url><loc>${"BASE"}${p}</loc></url>`).join("")}</urlset>`;
  const index = `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>BASE/sitemap-docs.xml</loc></sitemap><sitemap><loc>BASE/sitemap-blog.xml.gz</loc></sitemap></sitemapindex>`;
  const docsMap = urlset(["/docs/", ...SECTIONS.docs.map((p) => `/docs/${p}`), "/docs/sitemap-only"]);
  const blogMap = urlset(["/blog/", ...SECTIONS.blog.map((p) => `/blog/${p}`), "/blog/archive-only"]);
  pages.set("/docs/sitemap-only", { title: "Only in the sitemap", links: [] });
  pages.set("/blog/archive-only", { title: "Archive only in the gzipped sitemap", links: [] });

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const host = (req.headers.host ?? "").replace(/:\d+$/, "");
    const url = new URL(req.url ?? "/", "http://x");
    const hit: Hit = { host, path: url.pathname + url.search, start: Date.now(), end: 0, ua: String(req.headers["user-agent"] ?? "") };
    const by = owners.get(req.socket);
    if (by !== undefined) hit.by = by;
    hits.push(hit);
    // The answer is over when its last byte is handed to the socket (or the client gave up).
    res.on("finish", () => (hit.end ||= Date.now()));
    res.on("close", () => (hit.end ||= Date.now()));
    const b = `http://${req.headers.host ?? `127.0.0.1:${port}`}`;
    const fill = (s: string) => s.replaceAll("BASE", b).replaceAll("PORT", String(port));
    const page = (title: string, links: string[], status = 200) =>
      res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(fill(html(title, `Welcome to ${title}.`, links)));
    if (host === "docs.site.test") {
      if (url.pathname === "/robots.txt") return res.writeHead(404).end();
      return page(`Docs subdomain ${url.pathname}`, ["/", "/sub-page"]);
    }
    if (host === "other.test") {
      if (url.pathname === "/robots.txt") return res.writeHead(404).end();
      return page("Another host", ["/elsewhere"]);
    }
    const path = url.pathname;
    switch (path) {
      case "/robots.txt":
        return res.writeHead(200, { "content-type": "text/plain" }).end(fill(robots));
      case "/sitemap-index.xml":
        return res.writeHead(200, { "content-type": "application/xml" }).end(fill(index));
      case "/sitemap-docs.xml":
        return res.writeHead(200, { "content-type": "application/xml" }).end(fill(docsMap));
      case "/sitemap-blog.xml.gz":
        return res.writeHead(200, { "content-type": "application/gzip" }).end(gzipSync(fill(blogMap)));
      case "/old":
        return res.writeHead(301, { location: "/older" }).end();
      case "/older":
        return res.writeHead(302, { location: "/docs/moved" }).end();
      case "/slow":
        return; // never answers: the crawler's page timeout must end it
      case "/late": // answers after ?ms=N milliseconds
        return void setTimeout(() => page("Late", ["/"]), Number(url.searchParams.get("ms") ?? 0));
      case "/forbidden":
        return page("Forbidden", ["/"], 403); // linked from nowhere: a start page that refuses a crawler
      case "/search": {
        const n = Number(url.searchParams.get("page") ?? "1");
        return page(`Search page ${n}`, [`/search?q=a&page=${n + 1}`, `/search?q=b&page=${n}`]);
      }
    }
    const cal = /^\/calendar\/(\d+)\/(\d+)$/.exec(path);
    if (cal) {
      const [y, m] = [Number(cal[1]), Number(cal[2])];
      const next = m === 12 ? `/calendar/${y + 1}/1` : `/calendar/${y}/${m + 1}`;
      const prev = m === 1 ? `/calendar/${y - 1}/12` : `/calendar/${y}/${m - 1}`;
      return page(`Calendar ${y}-${m}`, [next, prev]);
    }
    const known = pages.get(path);
    if (known) return page(known.title, known.links);
    return page("Not found", ["/"], 404);
  });
  // Named once per connection, when it is accepted (a keep-alive connection carries many requests).
  const owners = new WeakMap<object, string>();
  if (opts.whose) {
    const whose = opts.whose;
    server.on("connection", (socket) => {
      const by = whose(socket.remotePort ?? 0, socket.localPort ?? 0);
      if (by !== undefined) owners.set(socket, by);
    });
  }
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as { port: number }).port;
  const maxInFlight = (h = "site.test") => {
    const mine = hits.filter((x) => x.host === h || (h === "site.test" && x.host === "127.0.0.1"));
    let max = 0;
    for (const a of mine) {
      const overlapping = mine.filter((b) => b.start <= a.start && (b.end === 0 || b.end > a.start)).length;
      max = Math.max(max, overlapping);
    }
    return max;
  };
  return {
    url: `http://site.test:${port}`,
    ipUrl: `http://127.0.0.1:${port}`,
    port,
    hits,
    crawlDelay,
    paths: () => hits.filter((h) => h.host === "site.test" || h.host === "127.0.0.1").map((h) => h.path),
    maxInFlight,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** Resolves the test site's names to 127.0.0.1 and nothing else (no internet in tests). */
export async function siteResolver(host: string): Promise<string[]> {
  return ["site.test", "docs.site.test", "other.test", "127.0.0.1"].includes(host) ? ["127.0.0.1"] : [];
}
