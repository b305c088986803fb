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
 *   loses its pages. A batch never stops for it: its URLs may be on many hosts, and one host
 *   being down says nothing about the others (a batch on one host fails its pages fast instead).
 */
import { siteUnreachable } from "../net/fetch-errors.ts";
import type { JobRecord, StoppedReason } from "./model.ts";
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

  /**
   * Counts one page's request: `status` its HTTP status (0 when none came), `unreachable` whether
   * its failure says the host cannot be reached, `at` its request's turn (begin()). Returns why the job stops now, if it does.
   */
  count(job: JobRecord, url: URL, depth: number, status: number, unreachable: boolean, at: number): StoppedReason | null {
    const refused = status === 429 || status === 503 || status === 403;
    const refusals = refused ? (this.refusals.get(job.id) ?? 0) + 1 : 0;
    this.refusals.set(job.id, refusals);
    let hosts = this.unreachable.get(job.id);
    if (!hosts) this.unreachable.set(job.id, (hosts = new Map()));
    const streak = hosts.get(url.host);
    if (unreachable) hosts.set(url.host, { n: (streak?.n ?? 0) + 1, at: Math.min(streak?.at ?? at, at) });
    else if (streak && at >= streak.at) hosts.delete(url.host);
    const gone = unreachable ? hosts.get(url.host)!.n : 0;
    const crawl = job.kind === "crawl";
    if ((refused && depth === 0 && crawl) || refusals >= REFUSALS_TO_STOP) return "site_refused";
    if (crawl && unreachable && (depth === 0 || (gone >= UNREACHABLE_TO_STOP && ownSite(job, url)))) return "site_unreachable";
    return null;
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
