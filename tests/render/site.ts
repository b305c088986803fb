/**
 * A local site for the rendering tests, on 127.0.0.2 (the address the tests allow), and a
 * forbidden listener on 127.0.0.3 that counts every connection: it must see none.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from "node:net";

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
  /** Every path and query the site was asked for, in order. */
  seen: string[];
  close(): Promise<void>;
}

/** One port on every loopback address the tests forbid (tried again if another process has it). */
async function listenEverywhere(onConnection: (s: Socket) => void): Promise<{ servers: TcpServer[]; port: number }> {
  for (let attempt = 0; ; attempt++) {
    const servers: TcpServer[] = [];
    try {
      let port = 0;
      for (const host of [FORBIDDEN_HOST, "127.0.0.1", "::1"]) {
        const server = createTcpServer(onConnection);
        await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, host, () => resolve()));
        servers.push(server);
        port = (server.address() as { port: number }).port;
      }
      return { servers, port };
    } catch (err) {
      await Promise.all(servers.map((f) => new Promise<void>((r) => f.close(() => r()))));
      if (attempt >= 20) throw err;
    }
  }
}

export async function startRenderSite(): Promise<Site> {
  const hits: string[] = [];
  let polls = 0;
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  // The forbidden port is listened on at 127.0.0.3, 127.0.0.1 and ::1 alike, so a request that
  // got through in any spelling of a loopback address would be seen.
  const { servers: forbidden, port: fport } = await listenEverywhere((s) => {
    hits.push(`${s.remoteAddress}:${s.localPort}`);
    s.destroy();
  });

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    // Text that exists only after a script fetches JSON.
    "/fetch-json": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page('<div id="root"></div><noscript>Please enable JavaScript.</noscript><script src="/app.js"></script>')),
    "/app.js": (_q, r) => r.writeHead(200, { "content-type": "text/javascript" }).end(
      `fetch("/data.json").then(r => r.json()).then(d => { const a = document.createElement("article"); a.innerHTML = "<h1>" + d.title + "</h1>" + d.paragraphs.map(p => "<p>" + p + "</p>").join(""); document.getElementById("root").appendChild(a); });`),
    "/data.json": (_q, r) => r.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ title: "The keeper's log", paragraphs: ARTICLE })),
    // Content revealed by a click.
    // A page with pictures, a video and a web font: only a screenshot needs them.
    "/pictures": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(
      `<style>@font-face { font-family: F; src: url(/asset/font.woff2); } body { font-family: F; }</style>
       <article>${ARTICLE.map((p) => `<p>${p}</p>`).join("")}<img src="/asset/photo.png"><video src="/asset/clip.mp4" autoplay muted></video></article>
       <script>fetch("/asset/data.json");</script>`)),
    "/asset/photo.png": (_q, r) => r.writeHead(200, { "content-type": "image/png" }).end(Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYPj/HwADAgH/eL9GtQAAAABJRU5ErkJggg==", "base64")),
    "/asset/data.json": (_q, r) => r.writeHead(200, { "content-type": "application/json" }).end("{}"),
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
    // Spins from its first script on: the document never even finishes loading.
    "/loop-forever": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(`<p>about to loop</p><script>for (;;) {}</script><p>never parsed</p>`)),
    // Allocates until the tab dies.
    "/crash": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(`<p>about to allocate</p><script>const a = []; setTimeout(function grow() { for (let i = 0; i < 200; i++) a.push(new Array(1e6).fill(i)); setTimeout(grow, 0); }, 10);</script>`)),
    // Every way a page can reach a private address. The page, its scripts and its workers each
    // report to the site once they have tried everything (/ssrf-done, /ssrf-worker-ran), so the
    // test knows the attempts were made.
    "/ssrf": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(
      `<article><p>${ARTICLE[0]}</p><p id="leak"></p></article>
       <img src="http://${FORBIDDEN_HOST}:${fport}/img.png">
       <img src="/redirect-private">
       <iframe src="http://127.0.0.1:${fport}/frame"></iframe>
       <iframe src="/redirect-private"></iframe>
       <iframe src="file:///etc/passwd"></iframe>
       <script src="http://evil.test:${fport}/script.js"></script>
       <script src="/ssrf.js"></script>`,
      `<link rel="stylesheet" href="http://[::1]:${fport}/style.css"><link rel="prefetch" href="http://127.0.0.1:${fport}/prefetch">`)),
    "/ssrf.js": (_q, r) => r.writeHead(200, { "content-type": "text/javascript" }).end(`
      const port = ${fport};
      const tries = [];
      for (const u of ["http://${FORBIDDEN_HOST}:" + port + "/fetch", "http://evil.test:" + port + "/dns", "http://mixed.test:" + port + "/mixed",
                       "http://localhost:" + port + "/localhost", "http://127.0.0.1:" + port + "/v4", "http://0.0.0.0:" + port + "/any",
                       "http://[::1]:" + port + "/v6", "http://[::ffff:${FORBIDDEN_HOST}]:" + port + "/mapped", "http://[::ffff:7f00:1]:" + port + "/mapped-hex",
                       "http://2130706435:" + port + "/int", "http://0x7f.0.0.1:" + port + "/hex", "http://0177.0.0.1:" + port + "/octal", "http://127.1:" + port + "/short",
                       "https://${FORBIDDEN_HOST}:" + port + "/tls", "/redirect-private"]) tries.push(fetch(u).catch(() => {}));
      tries.push(fetch("file:///etc/passwd").then((r) => r.text()).then((t) => { document.getElementById("leak").textContent = t; }).catch(() => {}));
      const x = new XMLHttpRequest(); x.open("GET", "http://${FORBIDDEN_HOST}:" + port + "/xhr"); x.send();
      try { navigator.sendBeacon("http://127.0.0.1:" + port + "/beacon", "x"); } catch {}
      try { new EventSource("http://${FORBIDDEN_HOST}:" + port + "/sse"); } catch {}
      for (const u of ["ws://${FORBIDDEN_HOST}:" + port + "/ws", "ws://evil.test:" + port + "/ws", "ws://[::1]:" + port + "/ws", "wss://127.0.0.1:" + port + "/wss"]) {
        tries.push(new Promise((done) => { try { const w = new WebSocket(u); w.onerror = w.onclose = w.onopen = done; } catch { done(); } }));
      }
      try { new Worker(URL.createObjectURL(new Blob(["fetch('http://evil.test:" + port + "/blob-worker').catch(() => {})"], { type: "text/javascript" }))); } catch {}
      try { new Worker("/ssrf-worker.js"); } catch {}
      try { new SharedWorker("/ssrf-worker.js?shared"); } catch {}
      Promise.all(tries).then(() => fetch("/ssrf-done"));`),
    "/ssrf-worker.js": (_q, r) => r.writeHead(200, { "content-type": "text/javascript" }).end(`
      const port = ${fport};
      Promise.all([fetch("http://evil.test:" + port + "/worker").catch(() => {}), fetch("http://127.0.0.1:" + port + "/worker-v4").catch(() => {}),
                   new Promise((done) => { try { const w = new WebSocket("ws://${FORBIDDEN_HOST}:" + port + "/worker-ws"); w.onerror = w.onclose = w.onopen = done; } catch { done(); } })])
        .then(() => fetch("/ssrf-worker-ran?" + (typeof SharedWorkerGlobalScope !== "undefined" ? "shared" : "dedicated")));`),
    // A download, as a page and as what a page's script starts.
    "/download": (_q, r) => r.writeHead(200, { "content-type": "application/octet-stream", "content-disposition": 'attachment; filename="x.bin"' }).end("secret bytes"),
    "/auto-download": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(
      `<article>${ARTICLE.map((p) => `<p>${p}</p>`).join("")}</article><a id="dl" href="/download" download>file</a><script>document.getElementById("dl").click();</script>`)),
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
    // A page naming one asset host many times (as pages name their CDN): fonts, images, scripts.
    "/one-cdn": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(
      `<article>${ARTICLE.map((p) => `<p>${p}</p>`).join("")}</article>` +
      Array.from({ length: 12 }, (_, i) => `<img src="http://cdn.test/img${i}.png"><script async src="https://cdn.test/s${i}.js"></script>`).join(""))),
    // Thirty requests to a host that never answers (?port=): async scripts over http and https, and fetches.
    "/hang-assets": (q, r) => {
      const port = Number(new URL(q.url!, "http://x").searchParams.get("port"));
      const at = `${SITE_HOST}:${port}`;
      r.writeHead(200, { "content-type": "text/html" }).end(page(
        `<article>${ARTICLE.map((p) => `<p>${p}</p>`).join("")}</article>` +
        Array.from({ length: 10 }, (_, i) => `<script async src="http://${at}/s${i}.js"></script><script async src="https://${at}/t${i}.js"></script>`).join("") +
        `<script>for (let i = 0; i < 10; i++) fetch("http://${at}/f" + i).catch(() => {});</script>`));
    },
    // A few hundred bytes whose script makes the document ?n × 5 bytes long (#28 item 1: 8,000,000 made 40 MB);
    // ?style=content-visibility:hidden spares the test Chromium's layout of it.
    "/huge-script": (q, r) => {
      const n = Number(new URL(q.url!, "http://x").searchParams.get("n"));
      const style = new URL(q.url!, "http://x").searchParams.get("style") ?? "";
      r.writeHead(200, { "content-type": "text/html" }).end(page(`<main id="m" style="${style}"></main><script>document.getElementById("m").textContent = "word ".repeat(${n});</script>`));
    },
    // The same words in the static HTML.
    "/huge-static": (q, r) => {
      const n = Number(new URL(q.url!, "http://x").searchParams.get("n"));
      r.writeHead(200, { "content-type": "text/html" }).end(page(`<main>${"word ".repeat(n)}</main>`));
    },
    // ?n paragraphs a script writes: small to send, slow to extract (?style as above).
    "/many-paragraphs": (q, r) => {
      const n = Number(new URL(q.url!, "http://x").searchParams.get("n"));
      const hide = new URL(q.url!, "http://x").searchParams.get("style") ?? "";
      r.writeHead(200, { "content-type": "text/html" }).end(page(`<main id="m" style="${hide}"></main><script>document.getElementById("m").innerHTML = "<p>The keeper wrote a line.</p>".repeat(${n});</script>`));
    },
    // A page that leaves for a forbidden address by itself (#28 item 5): by script, at once or a moment
    // later, over http or https, and by meta refresh. Its own text is an article, so a page read
    // in its place would look like a success.
    "/script-redirect": (q, r) => {
      const to = new URL(q.url!, "http://x").searchParams.get("to") === "https" ? `https://${FORBIDDEN_HOST}:${fport}/secret` : `http://${FORBIDDEN_HOST}:${fport}/secret`;
      const later = new URL(q.url!, "http://x").searchParams.has("later");
      r.writeHead(200, { "content-type": "text/html" }).end(page(`<article>${ARTICLE.map((p) => `<p>${p}</p>`).join("")}</article><script>${later ? `setTimeout(() => { location.href = "${to}"; }, 100);` : `location.href = "${to}";`}</script>`));
    },
    "/meta-refresh": (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end(page(`<article>${ARTICLE.map((p) => `<p>${p}</p>`).join("")}</article>`, `<meta http-equiv="refresh" content="0; url=http://${FORBIDDEN_HOST}:${fport}/secret">`)),
    "/redirect-private": (_q, r) => r.writeHead(302, { location: `http://${FORBIDDEN_HOST}:${fport}/secret` }).end(),
  };
  const server = createServer((req, res) => {
    seen.push(req.url ?? "");
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
    seen,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      await Promise.all(forbidden.map((f) => new Promise<void>((r) => f.close(() => r()))));
    },
  };
}

/** Test DNS: the site's and the attacker's names, each to its loopback address. */
export function renderResolver(): (host: string) => Promise<string[]> {
  // mixed.test has a public address too: one private answer is enough to refuse a name.
  const map: Record<string, string[]> = { "site.test": [SITE_HOST], "evil.test": [FORBIDDEN_HOST], "mixed.test": [FORBIDDEN_HOST, "93.184.216.34"] };
  return async (host) => {
    const found = map[host.toLowerCase()];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return found;
  };
}
