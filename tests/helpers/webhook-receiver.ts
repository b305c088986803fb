/**
 * A local webhook receiver on 127.0.0.1: records every delivery in the order it came (path,
 * body, parsed body, headers, when, and the status it was answered with). `answer` picks that
 * status for each delivery (204 by default).
 */
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from "node:http";

export interface Received {
  path: string;
  body: string;
  json: Record<string, any>;
  headers: IncomingHttpHeaders;
  at: number;
  status: number;
}

export interface Receiver {
  /** The receiver's origin, e.g. http://127.0.0.1:PORT (add any path). */
  base: string;
  /** `${base}/hook` */
  url: string;
  got: Received[];
  server: HttpServer;
  close(): Promise<void>;
}

export async function startReceiver(answer: (delivery: Omit<Received, "status">) => number = () => 204): Promise<Receiver> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const delivery = { path: req.url ?? "", body, json: body ? JSON.parse(body) : {}, headers: req.headers, at: Date.now() };
      const status = answer(delivery);
      got.push({ ...delivery, status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    base,
    url: `${base}/hook`,
    got,
    server,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
