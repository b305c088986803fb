/**
 * An in-test upstream: answers requests from recorded bodies chosen by URL path, so whole
 * operations run without the internet. Routes are tried in order; the first whose method and
 * path prefix match answers. Unmatched requests fail the test loudly (404 + a record).
 */
import { fixture } from "../backends/helpers.ts";

export interface ReplayRoute {
  method?: string;
  /** Host (no scheme) + path prefix, e.g. `hn.algolia.com/api/v1/search`. */
  prefix: string;
  /** A fixture path, or a function making the answer (may never resolve: a hanging upstream). */
  reply: string | ((req: Request) => Response | Promise<Response>);
  status?: number;
  headers?: Record<string, string>;
}

export interface Replay {
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** Every request seen, as `METHOD host/path?query`. */
  log: string[];
  requests: Request[];
}

export function replay(routes: readonly ReplayRoute[]): Replay {
  const log: string[] = [];
  const requests: Request[] = [];
  return {
    log,
    requests,
    async fetch(input, init) {
      const req = new Request(input, init);
      const url = new URL(req.url);
      const where = `${url.host}${url.pathname}`;
      log.push(`${req.method} ${where}${url.search}`);
      requests.push(req);
      const route = routes.find((r) => (r.method ?? "GET") === req.method && where.startsWith(r.prefix));
      if (!route) return new Response(`no replay for ${req.method} ${where}`, { status: 404 });
      if (typeof route.reply === "function") return route.reply(req);
      return new Response(fixture(route.reply), {
        status: route.status ?? 200,
        headers: { "content-type": "application/json", ...route.headers },
      });
    },
  };
}

/** A fetch that never answers until its signal aborts (then rejects like fetch does). */
export function hanging(req: Request): Promise<Response> {
  return new Promise((_, reject) => {
    if (req.signal.aborted) reject(new DOMException("aborted", "AbortError"));
    req.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
  });
}
