/**
 * The render fields (api.md §10) that scrape, crawl and batch scrape take alike, validated alike:
 * `render`, `wait_for` and `actions`, and the two checks every one of them makes before any work.
 */
import * as v from "valibot";
import { ApiError } from "../errors.ts";
import { wholeNumber } from "./fields.ts";

export const RENDER_MODES = ["auto", "always", "never"] as const;

const Selector = (field: string) => v.pipe(v.string(`${field} must be a CSS selector`), v.trim(), v.minLength(1, `${field} must not be empty`), v.maxLength(500, `${field} must be at most 500 characters`));

/** One browser action (api.md §10); each type takes only the fields it uses. */
const Action = v.variant("type", [
  v.strictObject({ type: v.literal("wait"), ms: v.optional(wholeNumber("ms", 0, 30_000)), selector: v.optional(Selector("selector")) }),
  v.strictObject({ type: v.literal("click"), selector: Selector("selector") }),
  v.strictObject({ type: v.literal("scroll"), direction: v.optional(v.picklist(["up", "down"], "direction must be up or down")), amount: v.optional(wholeNumber("amount", 1, 100_000)) }),
  v.strictObject({ type: v.literal("write"), text: v.pipe(v.string("text must be a string"), v.maxLength(10_000, "text must be at most 10000 characters")), selector: v.optional(Selector("selector")) }),
  v.strictObject({ type: v.literal("press"), key: v.pipe(v.string("key must be a string"), v.regex(/^[A-Za-z0-9+]{1,40}$/, "key must be a key name such as Enter, PageDown or Control+A")) }),
], "each action's type must be one of wait, click, scroll, write, press");

/** Rendering (api.md §10): the same fields and validation on scrape, crawl and batch scrape. */
export const RenderFields = {
  render: v.optional(v.picklist(RENDER_MODES, `render must be one of ${RENDER_MODES.join(", ")}`), "auto"),
  wait_for: v.optional(v.union([wholeNumber("wait_for", 0, 30_000), Selector("wait_for")], "wait_for must be a CSS selector or milliseconds up to 30000")),
  actions: v.optional(v.pipe(v.array(Action, "actions must be an array"), v.maxLength(20, "actions takes at most 20 steps"))),
};

/** Actions, wait_for and screenshots with `render: "never"`: a 400 that says why. */
export const NEEDS_BROWSER = "actions, wait_for and the screenshot format need a browser: use render auto or always.";

/**
 * A wait_for in milliseconds that timeout_ms leaves no time for: such a request could only end in
 * a timeout (after waiting all of it), so it is a 400 at once. Shared by scrape, crawl and batch.
 */
export function waitOutlastsTimeout(req: { wait_for?: string | number; timeout_ms: number }): ApiError | null {
  if (typeof req.wait_for !== "number" || req.wait_for < req.timeout_ms) return null;
  const message = `wait_for (${req.wait_for} ms) must be shorter than timeout_ms (${req.timeout_ms} ms), which also covers loading the page: raise timeout_ms (up to 60000) or wait less.`;
  return new ApiError("invalid_request", `wait_for: ${message}`, { details: [{ field: "wait_for", message }] });
}
