/**
 * A small documentation site on 127.0.0.1 for the collection tests: each path's page, an `<article>` with
 * its title and body under a nav link home, and a 404 for any other path. `pages` is read on each
 * request, so a test changes or removes a page by changing the object.
 */
import { createServer, type Server } from "node:http";

export type DocsPages = Record<string, { title: string; body: string }>;

export function docPage(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><title>${title}</title></head><body><nav><a href="/">Home</a></nav><main><article><h1>${title}</h1>${body}<p>This page belongs to the Acme Gateway documentation, which explains how to run the gateway in production.</p></article></main></body></html>`;
}

export async function startDocsSite(pages: DocsPages): Promise<{ server: Server; base: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.url ?? "");
    const p = pages[req.url ?? ""];
    if (!p) return void res.writeHead(404, { "content-type": "text/html" }).end("<html><body><h1>Not found</h1><p>There is no such page on this site.</p></body></html>");
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(docPage(p.title, p.body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { server, base: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}
