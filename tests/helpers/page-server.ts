/** A local web server (127.0.0.1 only) that serves pages for scrape, search-tier and research tests. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface PageServer {
  url: string;
  hits: string[];
  route(path: string, handler: Handler): void;
  close(): Promise<void>;
}

export async function startPageServer(): Promise<PageServer> {
  const routes = new Map<string, Handler>();
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    const h = routes.get((req.url ?? "").split("?")[0]);
    if (h) return h(req, res);
    res.writeHead(404, { "content-type": "text/html" }).end("<h1>not here</h1>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    route: (path, handler) => routes.set(path, handler),
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

export const send = (type: string, body: string | Buffer, status = 200): Handler => (_req, res) => {
  res.writeHead(status, { "content-type": type }).end(body);
};

/** HTML pages a test sets and changes between reads: `set(path, [status, html])` routes the path to that answer. */
export function htmlPages(server: PageServer): { set(path: string, answer: [number, string]): void } {
  return { set: (path, [status, body]) => server.route(path, send("text/html", body, status)) };
}
