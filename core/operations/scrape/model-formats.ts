/**
 * Scrape's formats that a model writes: `summary` (the model's, or extractive without one) and
 * `json` (the model fills `json_options.schema` from the page; refused without a model, since
 * no extractive answer can fill an arbitrary schema).
 */
import { ApiError } from "../../errors.ts";
import { LlmError, type LlmConfig } from "../../answers/llm.ts";
import { extractiveSummary, modelSummary, type PageText } from "../../answers/page-summary.ts";
import { BadSchemaError, checkSchema, modelJson, PageJsonError } from "../../answers/page-json.ts";
import type { FetchPort } from "../../ports.ts";
import type { ScrapeRequest } from "./schema.ts";

/** The model at QUARRY_LLM_URL, called through the app's egress fetch. */
export interface ScrapeModel {
  fetch: FetchPort;
  llm: LlmConfig | null;
  timeoutMs: number;
}

const bad = (field: string, message: string) => new ApiError("invalid_request", message, { details: [{ field, message }] });

export const NO_MODEL =
  "The json format needs a model: set QUARRY_LLM_URL (with QUARRY_LLM_MODEL and QUARRY_LLM_KEY as your endpoint needs) to an OpenAI-compatible chat endpoint. Without one, Quarry still returns the page's own structured data (data.structured_data) and an extractive summary.";

/** Refuses, before anything is read, what the model's formats cannot do as asked. */
export function checkFormats(req: ScrapeRequest, model: ScrapeModel | null): void {
  const json = req.formats.includes("json");
  if (req.json_options && !json) throw bad("json_options", "json_options is for the json format: add \"json\" to formats");
  if (!json) return;
  if (!req.json_options?.schema && !req.json_options?.prompt) throw bad("json_options", "the json format needs json_options.schema, json_options.prompt, or both");
  if (req.json_options.schema) {
    try {
      checkSchema(req.json_options.schema);
    } catch (err) {
      if (err instanceof BadSchemaError) throw bad("json_options.schema", `json_options.schema is not a usable JSON Schema: ${err.message}`);
      throw err;
    }
  }
  if (!model?.llm) throw new ApiError("model_unavailable", NO_MODEL);
}

export interface Made {
  data: { summary?: string; json?: unknown };
  tokens: number;
  meta: { summary?: "llm" | "extractive"; summary_error?: string };
}

/** The summary and json formats asked for, from the page's main content. */
export async function modelFormats(req: ScrapeRequest, page: PageText, model: ScrapeModel | null): Promise<Made> {
  const made: Made = { data: {}, tokens: 0, meta: {} };
  const llm = model?.llm ? { fetch: model.fetch, llm: model.llm, timeoutMs: model.timeoutMs } : null;
  for (const f of req.formats) {
    if (f === "summary") {
      if (llm) {
        try {
          const res = await modelSummary(llm, page);
          made.data.summary = res.summary;
          made.tokens += res.tokens;
          made.meta.summary = "llm";
          continue;
        } catch (err) {
          if (!(err instanceof LlmError)) throw err;
          made.meta.summary_error = `the model failed (${err.message}); this summary is extractive`;
        }
      }
      made.data.summary = extractiveSummary(page);
      made.meta.summary = "extractive";
    } else if (f === "json" && llm) {
      try {
        const res = await modelJson(llm, page, req.json_options ?? {});
        made.data.json = res.json;
        made.tokens += res.tokens;
      } catch (err) {
        if (err instanceof PageJsonError || err instanceof LlmError) throw new ApiError("upstream_error", `The json format could not be made: ${err.message}`);
        throw err;
      }
    }
  }
  return made;
}
