/**
 * What a monitor keeps of its reads (issue #31): one read per URL under its own tag, the one its next
 * run compares with, and nothing once it is deleted.
 */
import type { JobRecord } from "../../ports/job-model.ts";
import type { MonitorRecord } from "../../ports/monitors.ts";
import type { ReadHistory } from "../../ports/reads.ts";

/** The tag a monitor's reads are kept under, apart from the account's other reads. */
export const tagOf = (id: string) => `monitor:${id}`;

/** How often an instance looks for reads kept under the tag of a monitor that no longer exists. */
export const READS_SWEEP_MS = 3_600_000;

/**
 * Keeps of the monitor's reads only what its next run compares with: after a run whose job went
 * through the site (completed, or stopped at its page limit), the reads of URLs it did not reach at
 * all (`reached`: the read keys of every page it recorded, read or failed) are forgotten: pages the
 * site no longer links to, or past a lowered limit; were they found again, they would be `new`. A
 * page the run reached but could not read (a 500, a timeout) keeps its last good read. A job stopped
 * early otherwise (quota, deadline, the site refusing) reached only part of the site: nothing goes.
 */
export async function forgetUnreached(reads: ReadHistory | undefined, m: MonitorRecord, job: JobRecord, reached: ReadonlySet<string>): Promise<void> {
  if (!reads?.forgetOthers || job.status !== "completed" || (job.stoppedReason !== null && job.stoppedReason !== "limit_reached")) return;
  await reads.forgetOthers(m.account, tagOf(m.id), job.createdAt, reached);
}

/**
 * Forgets the reads kept under the tag of a monitor that no longer exists: those a page of its run
 * kept while it was being deleted, or that an instance which died between the two steps left. Only
 * tags of a monitor's form (`monitor:mon_` and its 26 characters): a scrape's own `changes_options.tag`
 * of another form is the account's, and stays.
 */
export async function sweepReads(reads: ReadHistory | undefined, exists: (monitorId: string) => Promise<boolean>): Promise<number> {
  if (!reads?.tags || !reads.forgetTag) return 0;
  let n = 0;
  for (const { account, tag } of await reads.tags(tagOf(""))) {
    if (!/^monitor:mon_[0-9A-Z]{26}$/.test(tag)) continue;
    if (!(await exists(tag.slice(tagOf("").length)))) n += await reads.forgetTag(account, tag);
  }
  return n;
}
