/**
 * What a search request asks for, resolved against the backends that will be asked: the query
 * each backend gets (topic, country, date hints), the backends skipped because they cannot
 * serve the topic, and every option that cannot be applied in full, named for `meta.ignored`
 * (api.md §8: an option Quarry cannot honour is accepted and named, never silently dropped).
 */
import type { BackendRegistry } from "../../backends/registry.ts";
import type { BackendQuery, Freshness, Topic } from "../../backends/types.ts";
import { countryCode } from "./country.ts";
import { exactRange, windowFor, type DateRange } from "./dates.ts";
import type { SearchRequest } from "./schema.ts";

export interface Ignored {
  option: string;
  reason: string;
  backends?: string[];
}

export interface SearchPlan {
  topic: Topic;
  /** ISO 3166-1 alpha-2, or null (none asked, or not recognised). */
  country: string | null;
  freshness: Freshness | null;
  range: DateRange | null;
  answer: "basic" | "advanced" | null;
  raw: "markdown" | "text" | null;
  chunks: number | null;
  images: boolean;
  favicon: boolean;
  /** Every result's page is read (raw content, chunks, images), not only the tier's top pages. */
  readAll: boolean;
  /** Backends not asked, with the reason `meta.backends` shows. */
  skip: Record<string, string>;
  ignored: Ignored[];
  /** The backend query's options (query text, size and language are added by the caller). */
  hints: Pick<BackendQuery, "topic" | "country" | "dateRange" | "freshness">;
}

const WINDOW_NAMES: Record<string, Freshness> = { d: "day", w: "week", m: "month", y: "year" };

export function planSearch(req: SearchRequest, registry: BackendRegistry, now: number): SearchPlan {
  const ignored: Ignored[] = [];
  const skip: Record<string, string> = {};
  const wanted = req.backends ? new Set(req.backends) : null;
  const asked = registry.entries.filter((e) => e.enabled && e.backend.about.kind === "web" && (!wanted || wanted.has(e.id)));

  let topic: Topic = "general";
  if (req.topic === "news") topic = "news";
  else if (req.topic === "finance") ignored.push({ option: "topic", reason: "no finance backend is configured: searched as general" });
  if (topic === "news" && !asked.some((e) => e.backend.about.supports?.news)) {
    // Refusing would break clients that always send a topic: search the web and say so.
    topic = "general";
    ignored.push({ option: "topic", reason: "none of the engines asked has a news search (Brave and SearXNG do): searched as general" });
  }
  if (topic === "news") {
    for (const e of asked) if (!e.backend.about.supports?.news) skip[e.id] = "no news search";
  }
  const searching = asked.filter((e) => !skip[e.id]);

  let country: string | null = null;
  if (req.country) {
    country = countryCode(req.country);
    if (!country) {
      ignored.push({ option: "country", reason: `"${req.country}" is not a country Quarry knows; searched without one` });
    } else {
      const cannot = searching.filter((e) => {
        const list = e.backend.about.supports?.countries;
        return !list || (list !== "any" && !list.includes(country!));
      });
      if (cannot.length) ignored.push({ option: "country", reason: `cannot search as from ${country}`, backends: cannot.map((e) => e.id) });
    }
  }

  const freshness = req.freshness ?? (req.time_range ? WINDOW_NAMES[req.time_range[0]!]! : null);
  const range = req.start_date || req.end_date ? { start_date: req.start_date ?? null, end_date: req.end_date ?? null } : null;
  let window: Freshness | null = freshness;
  if (range) {
    const hint = windowFor(range, now);
    window = freshness ?? hint;
    const cannot = searching.filter((e) => {
      const dates = e.backend.about.supports?.dates;
      return !dates || (dates === "window" && (!hint || range.end_date !== null));
    });
    if (cannot.length) {
      const fields = [range.start_date && "start_date", range.end_date && "end_date"].filter(Boolean).join(", ");
      ignored.push({ option: fields, reason: "cannot narrow the search to these dates; their dated results are filtered afterwards", backends: cannot.map((e) => e.id) });
    }
  }
  if (freshness) {
    const cannot = searching.filter((e) => !e.backend.about.supports?.dates);
    const option = req.freshness ? "freshness" : "time_range";
    if (cannot.length) ignored.push({ option, reason: "cannot narrow the search by age; their dated results are filtered afterwards", backends: cannot.map((e) => e.id) });
  }

  const answer = req.include_answer === true ? "basic" : req.include_answer || null;
  const raw = req.include_raw_content === true ? "markdown" : req.include_raw_content || null;
  const chunks = req.chunks_per_source ?? null;
  return {
    topic,
    country,
    freshness,
    range,
    answer,
    raw,
    chunks,
    images: req.include_images,
    favicon: req.include_favicon,
    readAll: raw !== null || chunks !== null || req.include_images,
    skip,
    ignored,
    hints: {
      topic,
      ...(country ? { country } : {}),
      ...(range ? { dateRange: exactRange(range, now) } : {}),
      freshness: window,
    },
  };
}
