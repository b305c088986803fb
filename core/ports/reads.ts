/** The reads port (see core/ports.ts, which re-exports it with the others). */

/**
 * What change tracking keeps of one read (issue #31): when, what the page answered, and its
 * markdown, so the next read of the same URL by the same account (and tag) can be compared.
 */
export interface PageRead {
  /** Milliseconds since the epoch. */
  readAt: number;
  statusCode: number;
  /** The page answered 404 or 410: it is gone. */
  gone: boolean;
  /** SHA-256 of the full markdown, lowercase hex ("" for a page that is gone). */
  digest: string;
  /** The markdown, cut to the store's cap (a diff against a cut page compares what was kept). */
  markdown: string;
}

/**
 * Each account's last read of each URL, by tag (the empty tag when none): durable, so a
 * restarted server still compares against it. Keyed by account first: nothing ever reads
 * another account's reads.
 */
export interface ReadHistory {
  /** The account's last read of `url` under `tag`; null when none is kept. */
  last(account: string, tag: string, url: string): Promise<PageRead | null>;
  /**
   * Keeps `read` as the account's last read of `url` under `tag`, and returns the one it
   * replaces, in one step: two reads at once compare against different previous reads, never
   * both against the same one.
   */
  exchange(account: string, tag: string, url: string, read: PageRead): Promise<PageRead | null>;
  /** Forgets every read of the account under `tag` (a deleted monitor's); returns how many. Optional: a store without it keeps them. */
  forgetTag?(account: string, tag: string): Promise<number>;
  /**
   * Forgets the account's reads under `tag` made before `before` whose URL (its read key) is not in
   * `keep`: what a monitor's run did not reach, so its next run has nothing to compare them with.
   * Returns how many. Optional, like forgetTag.
   */
  forgetOthers?(account: string, tag: string, before: number, keep: ReadonlySet<string>): Promise<number>;
  /** Every account and tag that has reads under a tag starting with `prefix` (a sweep for deleted monitors' reads). Optional. */
  tags?(prefix: string): Promise<Array<{ account: string; tag: string }>>;
}
