/**
 * A local site for the rendering tests, on 127.0.0.2 (the address the tests allow), and a
 * forbidden listener on 127.0.0.3 that counts every connection: it must see none.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type Socket } from "node:net";

export const SITE_HOST = "127.0.0.2";
export const FORBIDDEN_HOST = "127.0.0.3";

const ARTICLE = [
  "The lighthouse keeper logged every ship that passed the northern rocks during the long winter.",
  "Her notes describe storms, supply boats and the slow return of migrating birds in early spring.",
  "Historians later used the logbook to date the wreck found near the harbour entrance.",
];

function page(body: string, head = ""): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test page</title>${head}</head><body>${body}</body></html>`;
}

export interface Site {
  url: string;
  forbidden: { port: number; hits: string[] };
  /** Requests for /poll so far: a page that never settles polls while it is open. */
  polls(): number;
  close(): Promise<void>;
}

export async function startRenderSite(): Promise<Site> {
  const hits: string[] = [];
  let polls = 0;
  const sockets = new Set<Socket>();
  const forbidden = createTcpServer((s) => {
    hits.push(`${s.remoteAddress}`);
    s.destroy();
  });
  await new Promise<void>((r) => forbidden.listen(0, FORBIDDEN_HOST, () => r()));
  const fport = (forbidden.address() as { port: number }).port;

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    // Text that exists only after a script fetches JSON.
    "/fetch-json": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page('<div id="root"></div><noscript>Please enable JavaScript.</noscript><script src="/app.js"></script>')),
    "/app.js": (_q, r) => r.writeHead(200, { "content-type": "text/javascript" }).end(
      `fetch("/data.json").then(r => r.json()).then(d => { const a = document.createElement("article"); a.innerHTML = "<h1>" + d.title + "</h1>" + d.paragraphs.map(p => "<p>" + p + "</p>").join(""); document.getElementById("root").appendChild(a); });`),
    "/data.json": (_q, r) => r.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ title: "The keeper's log", paragraphs: ARTICLE })),
    // Content revealed by a click.
    "/click": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(
      `<main><h1>Story</h1><p>Teaser only.</p><button id="more">Read more</button><article id="full" hidden>${ARTICLE.map((p) => `<p>${p}</p>`).join("")}</article></main><script src="/click.js"></script>`)),
    "/click.js": (_q, r) => r.writeHead(200, { "content-type": "text/javascript" }).end(`document.getElementById("more").addEventListener("click", () => { document.getElementById("full").hidden = false; });`),
    // Infinite scroll: each scroll near the bottom loads the next page of items.
    "/scroll": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(`<main id="list" style="min-height:100vh"><p class="item">Item from page one about the harbour.</p></main><div style="height:2000px"></div><script src="/scroll.js"></script>`)),
    "/scroll.js": (_q, r) => r.writeHead(200, { "content-type": "text/javascript" }).end(
      `let n = 1, busy = false; addEventListener("scroll", () => { if (busy || n >= 4) return; busy = true; n++; fetch("/items?page=" + n).then(r => r.text()).then(t => { const p = document.createElement("p"); p.className = "item"; p.textContent = t; document.getElementById("list").appendChild(p); busy = false; }); });`),
    "/items": (q, r) => r.writeHead(200, { "content-type": "text/plain" }).end(`Item from page ${new URL(q.url!, "http://x").searchParams.get("page")} about the lighthouse.`),
    // Never settles: polls forever.
    "/never-settles": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(`<article>${ARTICLE.map((p) => `<p>${p}</p>`).join("")}</article><script>setInterval(() => fetch("/poll?" + Math.random()), 100);</script>`)),
    "/poll": (_q, r) => (polls++, r).writeHead(200, { "content-type": "text/plain" }).end("tick"),
    // Spins the renderer for ever after the content is in.
    "/spin": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(`<p>about to spin</p><script>setTimeout(() => { for (;;) {} }, 50);</script>`)),
    // Allocates until the tab dies.
    "/crash": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(`<p>about to allocate</p><script>const a = []; setTimeout(function grow() { for (let i = 0; i < 200; i++) a.push(new Array(1e6).fill(i)); setTimeout(grow, 0); }, 10);</script>`)),
    // Every way a page can reach a private address.
    "/ssrf": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(
      `<article><p>${ARTICLE[0]}</p></article>
       <img src="http://${FORBIDDEN_HOST}:${fport}/img.png">
       <iframe src="http://127.0.0.1:${fport}/frame"></iframe>
       <script src="http://evil.test:${fport}/script.js"></script>
       <script src="/ssrf.js"></script>`)),
    "/ssrf.js": (_q, r) => r.writeHead(200, { "content-type": "text/javascript" }).end(`
      const port = ${fport};
      for (const u of ["http://${FORBIDDEN_HOST}:" + port + "/xhr", "http://evil.test:" + port + "/dns", "http://localhost:" + port + "/l",
                       "http://[::1]:" + port + "/v6", "http://[::ffff:${FORBIDDEN_HOST}]:" + port + "/mapped", "http://2130706435:" + port + "/int",
                       "https://${FORBIDDEN_HOST}:" + port + "/tls", "/redirect-private"]) fetch(u).catch(() => {});
      try { new WebSocket("ws://${FORBIDDEN_HOST}:" + port + "/ws"); } catch {}
      try { new Worker(URL.createObjectURL(new Blob(["fetch('http://evil.test:" + port + "/worker').catch(() => {})"], { type: "text/javascript" }))); } catch {}
      const x = new XMLHttpRequest(); x.open("GET", "http://${FORBIDDEN_HOST}:" + port + "/sync-xhr"); x.send();`),
    // A small site to crawl: a static home, a static article, and two script shells whose text
    // (and, for one, a link to a further page) appears only after a fetch of JSON.
    "/site/": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(
      `<main><h1>Harbour archive</h1><p>${ARTICLE[0]}</p><p>${ARTICLE[1]}</p><p>${ARTICLE[2]}</p>
       <a href="/site/static">Static article</a> <a href="/site/shell-a">Shell A</a> <a href="/site/shell-b">Shell B</a></main>`)),
    "/site/static": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(`<article><h1>Static</h1>${ARTICLE.map((p) => `<p>${p} This page needs no script.</p>`).join("")}</article>`)),
    "/site/shell-a": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page('<div id="app"></div><script src="/site/shell.js" data-page="a"></script>')),
    "/site/shell-b": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page('<div id="app"></div><script src="/site/shell.js" data-page="b"></script>')),
    "/site/shell.js": (_q, r) => r.writeHead(200, { "content-type": "text/javascript" }).end(
      `const name = document.currentScript.dataset.page; fetch("/site/data.json?page=" + name).then(r => r.json()).then(d => { const a = document.createElement("article"); a.innerHTML = "<h1>" + d.title + "</h1>" + d.paragraphs.map(p => "<p>" + p + "</p>").join("") + (d.link ? '<a href="' + d.link + '">More</a>' : ""); document.getElementById("app").appendChild(a); });`),
    "/site/data.json": (q, r) => {
      const name = new URL(q.url!, "http://x").searchParams.get("page");
      r.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
        title: `Shell ${name}`, paragraphs: ARTICLE.map((p) => `Shell ${name} says: ${p}`), ...(name === "a" ? { link: "/site/found-by-script" } : {}),
      }));
    },
    "/site/found-by-script": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(`<article><h1>Found</h1>${ARTICLE.map((p) => `<p>Only a rendered page links here. ${p}</p>`).join("")}</article>`)),
    "/redirect-private": (_q, r) => r.writeHead(302, { location: `http://${FORBIDDEN_HOST}:${fport}/secret` }).end(),
  };
  const server = createServer((req, res) => {
    const handler = routes[(req.url ?? "").split("?")[0]!];
    if (handler) handler(req, res);
    else res.writeHead(404, { "content-type": "text/html" }).end(page("<p>not here</p>"));
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, SITE_HOST, () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${SITE_HOST}:${port}`,
    forbidden: { port: fport, hits },
    polls: () => polls,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      await new Promise<void>((r) => forbidden.close(() => r()));
    },
  };
}

/** Test DNS: the site's and the attacker's names, each to its loopback address. */
export function renderResolver(): (host: string) => Promise<string[]> {
  const map: Record<string, string[]> = { "site.test": [SITE_HOST], "evil.test": [FORBIDDEN_HOST] };
  return async (host) => {
    const found = map[host.toLowerCase()];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return found;
  };
}
