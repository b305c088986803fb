/**
 * What each input field means, written for a model deciding how to call a tool. The schemas
 * themselves come from the REST routes' valibot schemas; these words fill in what a JSON Schema
 * does not say. A field without words here keeps whatever its schema says.
 */
export const FIELD_WORDS: Record<string, string> = {
  query: "What to look for, in plain words (1–500 characters).",
  tier: "How much text to read: basic = snippets only (fast, no page fetched); summary = a query-focused excerpt of ~200 tokens per top result; detailed = ~800 tokens; full = the whole page or transcript (up to ~4,000 tokens).",
  max_results: "How many results to return (at most 20).",
  max_sources: "How many sources to keep.",
  include_domains: "Only return results from these hostnames, e.g. [\"docs.python.org\"].",
  exclude_domains: "Never return results from these hostnames.",
  freshness: "Only results published within the last day, week, month or year.",
  language: "BCP-47 language of the results, e.g. en, de, pt-BR.",
  backends: "Which search engines to ask; leave out to ask every configured one.",
  url: "The absolute http(s) URL of the page.",
  formats: "What to return for the page: markdown (default, best for reading), text, html (cleaned), links, screenshot (needs a browser on the server).",
  only_main_content: "true (default) strips navigation, ads and boilerplate; false keeps the whole page.",
  timeout_ms: "How long to wait for the page, in milliseconds (1000–60000).",
  max_tokens: "Cut the page text to at most this many tokens.",
  render: "auto (default) renders pages that need JavaScript in a browser; always or never force it.",
  wait_for: "Before reading a rendered page, wait for this CSS selector or this many milliseconds.",
  actions: "Browser steps before reading a rendered page: wait, click, scroll, write, press.",
  include_transcript: "Read the videos' transcripts (true by default): excerpts follow the tier.",
  min_duration: "Only videos at least this many seconds long.",
  max_duration: "Only videos at most this many seconds long.",
  platforms: "Which communities to search (hackernews, stackexchange, github, lemmy, reddit, bluesky, mastodon); leave out for every configured one.",
};
