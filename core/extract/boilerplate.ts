/**
 * Boilerplate removal before the main-content scorer runs. Readability scores blocks by text and
 * commas, so a long cookie notice, a comment thread or a "related stories" rail can win or ride
 * along; removing what is *named* or *marked up* as chrome first (class/id/role/aria patterns,
 * hidden elements, navigation tags) costs one walk and makes Readability faster too.
 * Nothing here is keyed to a site: the patterns are the vocabulary CMSs and ad/consent vendors use.
 */
import { childElements, measureTree, NON_CONTENT_TAGS, type TextStats } from "./dom.ts";

/** Chrome tags: never article text (headers/footers inside an article hold bylines and tags). */
const CHROME_TAGS = new Set(["NAV", "ASIDE", "FOOTER", "HEADER", "BUTTON", "SELECT", "INPUT", "TEXTAREA", "DIALOG", "MENU"]);

const CHROME_ROLES = new Set([
  "navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "toolbar",
  "dialog", "alertdialog", "tablist", "button",
]);

/**
 * Substrings of class/id values that name chrome. Ambiguous short words are matched as whole
 * class-name parts only (see BOILERPLATE_WORDS). Not `cmp-`: Adobe Experience Manager names every
 * component so (`cmp-text`, `cmp-container`), and consent banners are named by the words below.
 */
const BOILERPLATE_SUBSTRINGS = new RegExp(
  [
    "cookie", "consent", "gdpr", "onetrust", "news-?letter", "postmeta", "subscri", "signup", "sign-up",
    "social", "share", "sharing", "addthis", "sharethis", "breadcrumb", "related", "recommend",
    "outbrain", "taboola", "comment(?!ary)", "disqus", "sidebar", "widget", "advert", "sponsor",
    "promo", "popup", "modal", "overlay", "paywall", "pagination", "trending", "most-?popular",
    "most-?read", "read-?more", "more-?stories", "also-?read", "byline", "dateline", "timestamp",
    "caption", "credit", "skip-?link", "sr-only", "screen-?reader", "visually-?hidden", "toolbar", "masthead",
    "navbar", "subnav", "topnav", "footer", "tag-?cloud", "tag-?list", "author-?(bio|box|info)",
    // Forum software's panels beside a post: who wrote it, their signature, the post's votes and likes,
    // and the board's "who is online" box.
    "signature", "post-?profile", "user-?(info|details|extras|stats)", "reputation", "votecell", "vote-?count", "post-?likes",
    "online-?list", "who-?is-?online",
  ].join("|"),
  "i",
);

/** Whole class/id parts (split on '-' and '_') that name chrome. */
const BOILERPLATE_WORDS = new Set([
  "ad", "ads", "adv", "advertisement", "nav", "navigation", "menu", "tags", "tag", "print", "email",
  "header", "meta", "date", "author", "banner", "rating", "login",
  "signin", "donate", "jump", "breaking", "alert", "ticker",
]);

/**
 * Whole tokens that hide an element. "hidden" inside a longer token usually says something else:
 * `overflow-hidden` clips, `hidden-xs` hides on phones only, Drupal's `field--label-hidden` hides
 * the field's label, not the field.
 */
const HIDDEN_TOKENS = new Set(["hidden", "is-hidden", "u-hidden", "js-hidden"]);

/**
 * Tokens that describe what an element holds or is about rather than what it is: taxonomy terms
 * CMSs put on posts (WordPress `tag-social-media`, `category-news`, `format-standard`,
 * `status-publish`, `type-post`) and layout states (`has-sidebar`, `with-comments`, `no-ads`).
 * `tag-cloud`/`tag-list` are widgets, not terms, and stay.
 */
const DESCRIPTIVE_TOKEN = /^(?:(?:category|tag|format|status|type)[-_](?!cloud|list|links?$)|(?:has|with|no|without)-)/;

/**
 * Page builders call every block a widget: Elementor's text is in `elementor-widget-text-editor`
 * inside `elementor-widget-container`. There "widget" says nothing; the rest of the name still
 * does (`elementor-widget-share-buttons`, `elementor-widget-sidebar`).
 */
const PAGE_BUILDER_WIDGET = /^(elementor-)widget-?/;

const HIDDEN_STYLE = /(display\s*:\s*none|visibility\s*:\s*hidden)/i;

/** True when a class/id value names chrome; each space-separated token is judged on its own. */
export function isBoilerplateName(name: string): boolean {
  if (!name) return false;
  for (const raw of name.toLowerCase().split(/\s+/)) {
    if (!raw || DESCRIPTIVE_TOKEN.test(raw)) continue;
    if (HIDDEN_TOKENS.has(raw)) return true;
    // BEM: `block--modifier` is a variant of `block`; what the element is, is the part before "--".
    const token = raw.split("--")[0]!.replace(PAGE_BUILDER_WIDGET, "$1");
    if (BOILERPLATE_SUBSTRINGS.test(token)) return true;
    for (const part of token.split(/[_-]+/)) {
      if (BOILERPLATE_WORDS.has(part)) return true;
    }
  }
  return false;
}

/** Tags that may hold the whole page and must never be dropped by name alone. */
const PROTECTED_TAGS = new Set(["HTML", "BODY", "MAIN", "ARTICLE"]);

function isChrome(el: Element, tag: string, byName = true): boolean {
  if (CHROME_TAGS.has(tag)) return true;
  if (el.hasAttribute("hidden") || el.getAttribute("aria-hidden") === "true") return true;
  const role = el.getAttribute("role");
  if (role && CHROME_ROLES.has(role.toLowerCase())) return true;
  const style = el.getAttribute("style");
  if (style && HIDDEN_STYLE.test(style)) return true;
  if (!byName || PROTECTED_TAGS.has(tag)) return false;
  const names = `${el.getAttribute("class") ?? ""} ${el.getAttribute("id") ?? ""}`;
  return isBoilerplateName(names);
}

/** Removes scripts, styles, other non-content elements and HTML comments under `root`. */
export function removeNonContent(root: Element): void {
  let child = root.firstChild;
  while (child) {
    const next = child.nextSibling;
    if (child.nodeType === 1) {
      if (NON_CONTENT_TAGS.has((child as Element).tagName.toUpperCase())) (child as Element).remove();
      else removeNonContent(child as Element);
    } else if (child.nodeType === 8) {
      root.removeChild(child);
    }
    child = next;
  }
}

/**
 * Share of the page's non-link text above which a chrome-looking element is kept anyway: wrappers
 * named e.g. "article-body paywall" or "layout-with-sidebar" hold the article itself.
 */
const KEEP_SHARE = 0.3;

/**
 * Removes non-content and chrome elements under `root` (normally the body). Returns the element that
 * holds a discussion's posts (see findPosts) when the page is one: the parent of the outermost run of
 * posts with the most text.
 */
export function removeBoilerplate(root: Element): Element | null {
  const stats = measureTree(root, true);
  const total = ownText(stats.get(root));
  const thread: Thread = { holder: null, text: 0 };
  prune(root, stats, Math.max(1, total * KEEP_SHARE), NO_KINDS, thread);
  return thread.holder;
}

interface Thread {
  holder: Element | null;
  text: number;
}

function ownText(s: TextStats | undefined): number {
  return s ? s.text - s.linked : 0;
}

/** Phrasing elements: inside a sentence, a name says what the words are, not that they are chrome. */
const INLINE_TAGS = new Set(["SPAN", "B", "STRONG", "EM", "I", "SMALL", "TIME", "ABBR", "CITE"]);
const PARAGRAPHS = new Set(["P", "LI", "BLOCKQUOTE", "TD"]);

/**
 * `<p><span class="dateline">KOBE –</span> A total of …</p>`: a chrome-named phrase that shares its
 * paragraph with other text is part of the sentence.
 */
function inSentence(child: Element, tag: string, parent: Element, stats: Map<Element, TextStats>): boolean {
  if (!INLINE_TAGS.has(tag) || !PARAGRAPHS.has(parent.tagName.toUpperCase())) return false;
  const own = stats.get(child)?.text ?? 0;
  return (stats.get(parent)?.text ?? 0) - own > own;
}

/**
 * `thread` is null under a chrome-named box kept for its size ("comments" holding many comments):
 * a comment section beside an article is no discussion page, its comments go one by one as before.
 */
function prune(el: Element, stats: Map<Element, TextStats>, keepAbove: number, postKinds: ReadonlySet<string>, thread: Thread | null): void {
  const children = childElements(el);
  const posts = thread ? findPosts(children, stats, keepAbove, postKinds) : new Map<Element, string>();
  if (thread && posts.size && !postKinds.size) {
    const text = [...posts.keys()].reduce((n, e) => n + ownText(stats.get(e)), 0);
    if (text > thread.text) Object.assign(thread, { holder: el, text });
  }
  removeCardGroups(children, stats, posts);
  for (const child of children) {
    if (!child.parentNode) continue;
    const tag = child.tagName.toUpperCase();
    const kind = posts.get(child);
    const chrome = isChrome(child, tag, !kind);
    if (chrome && ownText(stats.get(child)) < keepAbove && !inSentence(child, tag, el, stats)) {
      child.remove();
      continue;
    }
    if (chrome && !postKinds.size) {
      prune(child, stats, keepAbove, postKinds, null);
      continue;
    }
    if (kind) prune(child, stats, Math.min(keepAbove, Math.max(1, ownText(stats.get(child)) * IN_POST_SHARE)), new Set([...postKinds, kind]), thread);
    else prune(child, stats, keepAbove, postKinds, thread);
  }
}

const NO_KINDS: ReadonlySet<string> = new Set();

/** Fewer than three same-kind boxes are as often a page's two columns or blocks as two posts. */
const MIN_POSTS = 3;

/**
 * Inside a post, a chrome-named box holding at least this share of the post's own text is the post's
 * body (`comment-body`, `timeline-comment`), not chrome beside it; smaller ones (user panels) still go.
 */
const IN_POST_SHARE = 0.5;

/**
 * Posts of a discussion: siblings of one kind (tag and first class name) that together hold the page's
 * main share of text, as forum posts, answers, issue comments and reply trees do. Each is short and
 * may be named "comment", so alone it looks like a teaser card or chrome; together they are the content.
 * A reply nested in a post (same kind as an enclosing post) is a post too; nothing else inside one is.
 */
function findPosts(children: Element[], stats: Map<Element, TextStats>, keepAbove: number, postKinds: ReadonlySet<string>): Map<Element, string> {
  const byKind = new Map<string, Element[]>();
  for (const child of children) {
    const kind = postKind(child, postKinds.size > 0);
    if (kind) byKind.set(kind, [...(byKind.get(kind) ?? []), child]);
  }
  const posts = new Map<Element, string>();
  for (const [kind, els] of byKind) {
    const total = els.reduce((n, e) => n + ownText(stats.get(e)), 0);
    // Inside a post, only replies are posts; its own parts (user cell, message cell) are not.
    const isPost = postKinds.size ? postKinds.has(kind) : els.length >= MIN_POSTS && total >= keepAbove && els.filter(signed).length >= MIN_POSTS;
    if (isPost) for (const e of els) posts.set(e, kind);
  }
  return posts;
}

/**
 * A post is addressable: forum, Q&A and tracker software give each its number in an id (`p391022`,
 * `post_2`, `answer-927401`, `issuecomment-…`), on the post or a child of it, for permalinks.
 * Same-kind boxes without one (modal windows, teaser columns, sidebar wells) are not posts.
 */
function postKind(el: Element, nested: boolean): string | null {
  if (!POST_TAGS.has(el.tagName)) return null;
  const first = (el.getAttribute("class") ?? "").trim().split(/\s+/)[0];
  if (!first) return null;
  if (!nested && !numbered(el) && !childElements(el).some(numbered)) return null;
  return `${el.tagName}.${first}`;
}

const numbered = (el: Element) => /\d/.test(el.id);

/** Not LI: numbered list items are references and footnotes far more often than posts. */
const POST_TAGS = new Set(["DIV", "ARTICLE", "SECTION"]);

/**
 * A post names who wrote it: forum, Q&A and tracker software mark the name (`username`, `author`,
 * `creator`, `poster`, `itemprop="author"`, `data-author`). Numbered content blocks of a CMS
 * (TYPO3's `c123`) and reference lists do not.
 */
const AUTHOR_MARK = /author|user|creator|poster/i;

function signed(post: Element): boolean {
  if (post.hasAttribute("data-author")) return true;
  for (const el of Array.from(post.querySelectorAll("[class], [itemprop]"))) {
    if (AUTHOR_MARK.test(el.getAttribute("class") ?? "") || el.getAttribute("itemprop") === "author") return true;
  }
  return false;
}

const CARD_TAGS = new Set(["DIV", "ARTICLE", "SECTION", "LI", "FIGURE", "ASIDE"]);

/**
 * Teaser cards: three or more consecutive siblings with the same tag and class, each short and each
 * holding a link. Article paragraphs do not come in link-bearing look-alike boxes; "more stories"
 * rails and product grids do.
 */
function removeCardGroups(children: Element[], stats: Map<Element, TextStats>, posts: Map<Element, string>): void {
  let i = 0;
  while (i < children.length) {
    const first = children[i]!;
    const key = posts.has(first) ? null : cardKey(first, stats);
    let j = i + 1;
    if (key) {
      while (j < children.length && cardKey(children[j]!, stats) === key) j++;
      if (j - i >= 3) {
        for (let k = i; k < j; k++) children[k]!.remove();
      }
    }
    i = key ? j : i + 1;
  }
}

function cardKey(el: Element, stats: Map<Element, TextStats>): string | null {
  if (!CARD_TAGS.has(el.tagName)) return null;
  const cls = el.getAttribute("class");
  if (!cls) return null;
  const s = stats.get(el);
  if (!s || s.text > 300 || s.linked === 0) return null;
  return `${el.tagName}.${cls}`;
}
