/**
 * Streaks of pages that say a job's site will not be read, so the job stops early instead of
 * asking for every page it found. Kept per process: with several instances sharing a job, each
 * counts the pages it read itself, so a streak split across instances takes longer to reach, and
 * one instance's streak may have had another's answer in between (the site was flapping then).
 *
 * - Refusals (403, 429 or 503 answers), per job: a crawl's start page refused, or 5 in a row,
 *   stop the job with `site_refused`.
 * - Unreachability (siteUnreachable: no HTTP answer at all, refused or reset connections, DNS,
 *   TLS, timeouts), per job and host: any HTTP answer from the host, whatever its status, ends
 *   its streak, unless its request began before the streak's first failure did (an answer that
 *   came before the site went down, its page recorded after the failures that followed, says
 *   nothing about the site now). After 5 in a row the host is down for the job: its pages not
 *   yet read are recorded failed with `host_unreachable`, without a request and without a unit
 *   of quota. A crawl stops with `site_unreachable` when its start page cannot be reached or its
 *   own site (the start host, `www.` or not) is down; another host it was allowed onto only
 *   loses its pages. A robots.txt fetch counts as a page's request would (one that got no answer
 *   keeps the page out as `robots_unreachable`): a site that goes down after robots.txt's
 *   10 minutes in the cache stops the crawl the same way. A batch never stops for it: its URLs may be on many hosts, and one host
 *   being down says nothing about the others (a batch on one host fails its pages fast instead).
 */
import { siteUnreachable } from "../net/fetch-errors.ts";
import type { JobRecord, StoppedReason } from "../ports/job-model.ts";
import { robotsReason, type Robots } from "./site-files.ts";
import { siteOf } from "./url-rules.ts";

/** Refusing answers in a row after which a job stops with `site_refused`. */
export const REFUSALS_TO_STOP = 5;
/** Failures to reach one host in a row after which it is down for the job. */
export const UNREACHABLE_TO_STOP = 5;
/** The error of a page not requested because its host is down. */
export const HOST_DOWN = "host_unreachable";

/** Thrown for a page whose host went down while it waited for its turn: it is not requested. */
export class HostDown extends Error {
  readonly code = HOST_DOWN;
}

/** Whether a page's failure counts toward its host's streak (a page skipped for it keeps it going). */
export function unreachableFailure(err: unknown): boolean {
  return err instanceof HostDown || siteUnreachable(err);
}

/** Stops that say the site could not be read: with no page read, the job failed. */
export const SITE_STOPS: ReadonlySet<StoppedReason | null> = new Set<StoppedReason | null>(["site_refused", "site_unreachable"]);

export class SiteStreaks {
  private readonly refusals = new Map<string, number>();
  private turns = 0;
  /** Job id, then host (with its port): failures to reach it in a row, and the turn of the earliest one's request. */
  private readonly unreachable = new Map<string, Map<string, { n: number; at: number }>>();
  /** Each robots.txt fetch, and the jobs that counted it. */
  private readonly robotsSeen = new WeakMap<Robots, Set<string>>();

  /**
   * Counts one page's request: `status` its HTTP status (0 when none came), `unreachable` whether
   * its failure says the host cannot be reached, `at` its request's turn (begin()). Returns why the job stops now, if it does.
   */
  count(job: JobRecord, url: URL, depth: number, status: number, unreachable: boolean, at: number): StoppedReason | null {
    const refused = status === 429 || status === 503 || status === 403;
    const refusals = refused ? (this.refusals.get(job.id) ?? 0) + 1 : 0;
    this.refusals.set(job.id, refusals);
    const gone = this.reach(job.id, url.host, unreachable, at);
    const crawl = job.kind === "crawl";
    if ((refused && depth === 0 && crawl) || refusals >= REFUSALS_TO_STOP) return "site_refused";
    return unreachable ? this.gone(job, url, depth, gone) : null;
  }

  /**
   * A page's robots.txt as its task got it. The first time the job sees one fetch of it, that
   * fetch counts toward the host's streak: no answer at all as a failure, any HTTP answer ends
   * the streak (a copy read before, or one another of the job's pages counted, says nothing new).
   * Returns how the page fails when robots.txt keeps it out, with why the job stops, if it does:
   * an unreachable one as a page that got no answer would (`site_unreachable`), else a crawl's
   * start page kept out stops it with `site_refused`. Null when the page may be read.
   */
  robots(job: JobRecord, url: URL, depth: number, robots: Robots): { error: string; stop: StoppedReason | null; unreachable: boolean } | null {
    const seen = this.robotsSeen.get(robots) ?? new Set<string>();
    const fresh = robots.reached !== undefined && !seen.has(job.id);
    if (fresh) this.robotsSeen.set(robots, seen.add(job.id));
    const gone = fresh ? this.reach(job.id, url.host, !robots.reached, robots.asked ?? 0) : 0;
    if (robots.allowed(url.href)) return null;
    const unreachable = robots.reached === false;
    const stop = unreachable && (fresh || depth === 0) ? this.gone(job, url, depth, gone) : null;
    return { error: robotsReason(robots), stop: stop ?? (depth === 0 && job.kind === "crawl" ? "site_refused" : null), unreachable };
  }

  /** Counts one failure to reach the host (or an answer, which ends its streak); the failures in a row now. */
  private reach(jobId: string, host: string, unreachable: boolean, at: number): number {
    let hosts = this.unreachable.get(jobId);
    if (!hosts) this.unreachable.set(jobId, (hosts = new Map()));
    const streak = hosts.get(host);
    if (unreachable) hosts.set(host, { n: (streak?.n ?? 0) + 1, at: Math.min(streak?.at ?? at, at) });
    else if (streak && at >= streak.at) hosts.delete(host);
    return unreachable ? hosts.get(host)!.n : 0;
  }

  /** After a failure to reach `url`'s host, `gone` in a row: whether the crawl stops for it (a batch never does). */
  private gone(job: JobRecord, url: URL, depth: number, gone: number): StoppedReason | null {
    return job.kind === "crawl" && (depth === 0 || (gone >= UNREACHABLE_TO_STOP && ownSite(job, url))) ? "site_unreachable" : null;
  }

  /** A page's request begins: its turn, in the order this process began them (a clock's milliseconds would tie). */
  begin(): number {
    return ++this.turns;
  }

  /** The host failed to answer UNREACHABLE_TO_STOP times in a row for this job: its pages are not requested. */
  down(jobId: string, host: string): boolean {
    return (this.unreachable.get(jobId)?.get(host)?.n ?? 0) >= UNREACHABLE_TO_STOP;
  }

  forget(jobId: string): void {
    this.refusals.delete(jobId);
    this.unreachable.delete(jobId);
  }
}

/** The crawl's own site: its start host, with or without `www.` (subdomains and other hosts are not). */
function ownSite(job: JobRecord, url: URL): boolean {
  return job.spec.url !== null && siteOf(url.hostname) === siteOf(new URL(job.spec.url).hostname);
}
