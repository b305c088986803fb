/**
 * Finds the main content element: boilerplate removal, then Mozilla Readability's scorer, then
 * pruning of what Readability lets through; JSON-LD `articleBody` when all that finds too little.
 */
import { removeBoilerplate } from "./boilerplate.ts";
import { textLength } from "./dom.ts";
import { tidyEdges } from "./content-edges.ts";
import { findLead, restoreLead } from "./lead.ts";
import { pruneContent } from "./prune-content.ts";
import { readabilityPick } from "./readability-pick.ts";
import type { PageMetadata } from "../ports/extract.ts";

/**
 * Readability accepts its first pick when it holds this many characters, and otherwise retries
 * with its filters loosened (unlikely-looking class names, class weights, conditional cleaning).
 * Its default, 500, accepts a two-paragraph pick on pages whose text is spread over blocks the
 * filters dropped (page-builder columns, blocks named like chrome); 1500 lets those pages retry
 * (multilingual F +0.002, articles +0.0002). The retries are not free: on pages whose body holds
 * less than this all four attempts run (a quarter of the article set's extraction time);
 * readabilityPick stops at the first attempt that keeps the whole body, where one does.
 */
const RETRY_BELOW = 1500;

/** Below this share of the posts' text, Readability's pick is taken for a part of the thread. */
const THREAD_SHARE = 0.5;

export function selectMainContent(document: Document, meta: PageMetadata): Element | null {
  const body = document.body;
  if (!body) return null;
  const lead = findLead(body, meta.title);
  const thread = removeBoilerplate(body);
  // Readability moves the nodes it picks out of the page, so the posts are kept aside first.
  const posts = thread ? (thread.cloneNode(true) as Element) : null;
  let content: Element | null = null;
  try {
    content = readabilityPick(document, body, { retryBelow: RETRY_BELOW });
  } catch {
    // Readability throws on some malformed trees; the fallback below still has a chance.
    content = null;
  }
  // Readability scores a block's text into five ancestors at most; forum posts nest deeper than
  // that, so it can pick one post's body alone. A pick with under half the thread's text is one.
  if (posts && (!content || (textLength(content) < textLength(posts) * THREAD_SHARE && partOf(content, posts)))) content = posts;
  if (content) {
    pruneContent(content, meta.title, !!posts && (content === posts || partOf(posts, content)));
    tidyEdges(content);
    restoreLead(content, lead);
  }
  const found = content ? textLength(content) : 0;

  // JSON-LD bodies are often truncated teasers, so they only win when the page gave us far less.
  const articleBody = meta.articleBody;
  if (articleBody && articleBody.length >= 200 && found < articleBody.length * 0.5) {
    // CMSs fill `articleBody` from the body field, which leaves the lead out as the scorer did.
    const fromJson = paragraphsElement(document, articleBody);
    restoreLead(fromJson, lead);
    return fromJson;
  }
  return found > 0 ? content : null;
}

/** True when `part`'s opening words are in `whole`: a pick of (part of) a post, or one holding the posts. */
function partOf(part: Element, whole: Element): boolean {
  const words = (el: Element) => (el.textContent ?? "").replace(/\s+/g, " ").trim();
  const opening = words(part).slice(0, 100);
  return opening.length > 0 && words(whole).includes(opening);
}

/** Plain text (JSON-LD `articleBody`) as `<div><p>…</p>…</div>`, one paragraph per line break. */
function paragraphsElement(document: Document, text: string): Element {
  const div = document.createElement("div");
  for (const para of text.split(/\s*\n\s*/)) {
    if (!para.trim()) continue;
    const p = document.createElement("p");
    p.textContent = para.trim();
    div.appendChild(p);
  }
  return div;
}
