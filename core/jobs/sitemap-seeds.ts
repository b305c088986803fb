/**
 * A crawl's sitemaps (api.md §9, `sitemap: include | only | skip`, as POST /v1/map reads them):
 * when its start page has been read, the URLs its site lists in robots.txt's `Sitemap:` lines
 * and /sitemap.xml (indexes and gzipped ones followed, on the start's site only) join its
 * frontier at depth 0, as Firecrawl counts them, through the same checks as links (discover.ts):
 * private addresses, scope and paths, robots.txt, traps. Every fetch is a guarded page fetch that
 * takes its turn on the host (politeness.ts), and ends when the job's task is aborted.
 */
import type { JobRecord, JobTask } from "../ports/job-model.ts";
import type { PagePort } from "../ports.ts";
import { readSitemaps } from "./site-files.ts";
import { frontierKey } from "./url-rules.ts";
import type { WorkContext } from "./work-context.ts";

/** Whether the task is a crawl's start page (its sitemap URLs are at depth 0 too, but are no start). */
export function isStart(job: JobRecord, task: JobTask): boolean {
  return job.kind === "crawl" && task.depth === 0 && job.spec.url !== null && frontierKey(task.url) === frontierKey(job.spec.url);
}

/**
 * The depth the host's streaks judge a page by (site-streaks.ts): a crawl's start page is depth 0
 * (its failure ends the crawl at once); a sitemap's page, depth 0 for max_depth, fails as any
 * other page does.
 */
export function streakDepth(job: JobRecord, task: JobTask): number {
  return task.depth === 0 && job.kind === "crawl" && !isStart(job, task) ? 1 : task.depth;
}

/** Whether the crawl reads sitemaps at this task: its start page, with `sitemap` other than skip and a `max_depth` of 1 or more (a job stored before the option reads none). */
export function readsSitemaps(job: JobRecord, task: JobTask): boolean {
  // `max_depth: 0` reads the start page alone, sitemaps or not.
  return (job.spec.sitemap ?? "skip") !== "skip" && job.spec.maxDepth >= 1 && isStart(job, task);
}

const siteOf = (host: string) => host.toLowerCase().replace(/^www\./, "");

/** The page URLs the start page's site lists in its sitemaps (at most the job's limit); none when they cannot be read. */
export async function sitemapUrls(ctx: WorkContext, job: JobRecord, startUrl: string, signal?: AbortSignal): Promise<string[]> {
  const start = new URL(startUrl);
  const robots = await ctx.robots.get(start.origin);
  const roots = [...robots.sitemaps().filter((s) => URL.canParse(s)), `${start.origin}/sitemap.xml`];
  const site = siteOf(start.hostname);
  // Each sitemap fetch takes its turn on the host as a page does (2 at a time, Crawl-delay between starts).
  const delay = robots.crawlDelay();
  const pages: PagePort = {
    ...ctx.ports.pages,
    fetchPage: async (url, opts) => {
      const release = await ctx.gate.acquire(new URL(url).host, delay ? Math.min(delay * 1000, 60_000) : 0, signal);
      try {
        return await ctx.ports.pages.fetchPage(url, signal ? { ...opts, signal } : opts);
      } finally {
        release();
      }
    },
  };
  const read = await readSitemaps(pages, roots, {
    maxPages: job.spec.limit,
    timeoutMs: job.spec.timeoutMs,
    sameSite: (url) => siteOf(new URL(url).hostname) === site || (job.spec.allowSubdomains && siteOf(new URL(url).hostname).endsWith(`.${site}`)),
    deadline: performance.now() + Math.max(15_000, job.spec.timeoutMs),
  });
  return read.pages;
}
