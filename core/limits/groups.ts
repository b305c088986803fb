/** Usage groups of the metered operations (api.md §2), always reported, zero when unused. */
export const USAGE_GROUPS = ["search", "video", "research", "social", "scrape", "crawl"] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];
