/** A crawl job read over a real server's HTTP API, as a client would: JSON calls, polling, and every page across `next` slices. */

export type Job = Record<string, any>;

export async function json(url: string, key: string, init: RequestInit = {}): Promise<Job> {
  const res = await fetch(url, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers } });
  return res.json();
}

/** Polls `url` every 100 ms until `done` holds or `ms` pass; answers the last reading. */
export async function waitFor(url: string, key: string, done: (j: Job) => boolean, ms: number): Promise<Job> {
  const until = Date.now() + ms;
  for (;;) {
    const j = await json(url, key);
    if (done(j) || Date.now() > until) return j;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every page of a finished job's status, following its `next` links on `serverUrl`. */
export async function allPages(status: Job, serverUrl: string, key: string): Promise<Job[]> {
  const pages: Job[] = [...status.data];
  for (let next = status.next; next; ) {
    const more = await json(next.replace(/^https?:\/\/[^/]+/, serverUrl), key);
    pages.push(...more.data);
    next = more.next;
  }
  return pages;
}
