/**
 * Finds the main content element: boilerplate removal, then Mozilla Readability's scorer, then
 * pruning of what Readability lets through.
 */
import { Readability } from "@mozilla/readability";
import { removeBoilerplate } from "./boilerplate.ts";
import { textLength } from "./dom.ts";
import { pruneContent } from "./prune-content.ts";
import type { PageMetadata } from "./types.ts";

export function selectMainContent(document: Document, _meta?: PageMetadata): Element | null {
  const body = document.body;
  if (!body) return null;
  removeBoilerplate(body);
  const reader = new Readability<Element>(document, {
    keepClasses: true,
    disableJSONLD: true,
    // Keep the DOM node: we prune and render it ourselves instead of re-parsing serialised HTML.
    serializer: (node) => node as Element,
  });
  const article = reader.parse();
  const content = article?.content ?? null;
  if (!content) return null;
  pruneContent(content);
  if (textLength(content) === 0) return null;
  return content;
}
