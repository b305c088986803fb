/** The `changes` format's options, shared by scrape, crawl, batch and monitors (issue #31). */
import * as v from "valibot";

export const ChangesOptions = v.pipe(
  v.strictObject({
    tag: v.optional(v.pipe(
      v.string("changes_options.tag must be a string"), v.trim(), v.minLength(1, "changes_options.tag must not be empty"),
      v.maxLength(100, "changes_options.tag must be at most 100 characters"),
      v.description("Compare against reads made under this tag only (reads without a tag are another series)"),
    )),
    diff: v.optional(v.pipe(v.boolean("changes_options.diff must be a boolean"), v.description("Add a git-style unified diff of the markdown (`changes.diff`)")), false),
  }, "changes_options must be an object: {tag, diff}"),
  v.description("For the `changes` format: the tag reads are compared under, and whether to add the diff"),
);
export type ChangesOptionsValue = v.InferOutput<typeof ChangesOptions>;

export const ChangesAnswer = v.pipe(
  v.nullable(v.object({
    change_status: v.pipe(v.picklist(["new", "same", "changed", "removed"]), v.description("new: no earlier read by this account (and tag); same/changed: the markdown is (not) as last read; removed: the page now answers 404 or 410")),
    previous_read_at: v.pipe(v.nullable(v.string()), v.description("When the read compared against was made (ISO 8601), null for none")),
    visibility: v.pipe(v.picklist(["visible", "hidden"]), v.description("visible: the page answers; hidden: it is gone (404/410)")),
    tag: v.nullable(v.string()),
    diff: v.optional(v.pipe(v.nullable(v.string()), v.description("With changes_options.diff: a git-style unified diff of the markdown, \"\" when the same, null when there is nothing to compare against (or the diff took too long)"))),
  })),
  v.description("The `changes` format: this read compared with this account's previous read of the URL; null when the page answered an error other than 404/410 (not compared, not kept)"),
);
