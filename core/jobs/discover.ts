/**
 * The links a crawl's page adds to its frontier (page-work.ts hands them here): private addresses,
 * scope, robots.txt, URL traps, and the per-page cap on links taken (QUARRY_JOB_PAGE_LINKS).
 */
import { checkUrl } from "../net/url-policy.ts";
import type { JobRecord, JobTask, SkippedUrl } from "../ports/job-model.ts";
import type { WorkContext } from "./work-context.ts";
import { robotsReason } from "./site-files.ts";
import { frontierKey, outOfScope } from "./url-rules.ts";

/**
 * The links worth adding: a private address is skipped and reported whatever the scope; then
 * scope (silently: other sites are not this crawl's business), robots.txt and URL traps
 * (reported). Links this process saw committed are dropped; other duplicates are left to the store.
 * `depth` is the links' (one below the page's); a crawl's sitemap URLs are depth 0 (sitemap-seeds.ts).
 */
export async function discover(ctx: WorkContext, job: JobRecord, links: string[], from: JobTask, depth = from.depth + 1): Promise<{ tasks: JobTask[]; skipped: SkippedUrl[]; dropped: number }> {
  const rules = ctx.rulesOf(job);
  const traps = ctx.trapsOf(job.id);
  const seen = new Set<string>();
  const tasks: JobTask[] = [];
  const skipped: SkippedUrl[] = [];
  const robotsBy = new Map<string, Awaited<ReturnType<WorkContext["robots"]["get"]>>>();
  // The page's first QUARRY_JOB_PAGE_LINKS new links in the job's scope are taken; the rest are counted, not followed.
  let taken = 0;
  let dropped = 0;
  const take = () => (taken < ctx.config.jobs.pageLinks ? (taken++, true) : (dropped++, false));
  for (const raw of links) {
    const url = frontierKey(raw);
    // A link the store holds already (a page's navigation, the same on every page) costs no
    // statement and no check: the store would drop it, and the guard let it through before.
    if (!url || seen.has(url) || traps.inFrontier(url)) continue;
    seen.add(url);
    // Found before on another page and let through then: the same rules give the same answer
    // (robots.txt is asked again when the page is fetched). The store drops what it already holds.
    if (traps.admitted(url)) {
      if (take()) tasks.push({ jobId: job.id, url, depth });
      continue;
    }
    if (!checkUrl(url, ctx.allow).ok) {
      skipped.push({ url, reason: "url_not_allowed" });
      continue;
    }
    if (outOfScope(url, rules) || !take()) continue;
    let robots: Awaited<ReturnType<WorkContext["robots"]["get"]>> | undefined;
    if (job.spec.respectRobots) {
      const origin = new URL(url).origin;
      robots = robotsBy.get(origin);
      if (!robots) robotsBy.set(origin, (robots = await ctx.robots.get(origin)));
    }
    if (robots && !robots.allowed(url)) {
      skipped.push({ url, reason: robotsReason(robots) });
      continue;
    }
    // A sitemap's URL (depth 0) was found on no page: no chain of pages leads to it.
    const trap = traps.check(url, depth === 0 ? undefined : from.url);
    if (trap) {
      skipped.push({ url, reason: `trap_${trap}` });
      continue;
    }
    tasks.push({ jobId: job.id, url, depth });
  }
  return { tasks, skipped, dropped };
}
