/**
 * The extraction rules on small hand-written pages: each case isolates one rule (boilerplate by
 * name, the keep-big-wrappers guard, teaser cards, link lists, sibling articles, datelines,
 * trailing headings, captions) and metadata normalisation.
 */
import { describe, expect, it } from "vitest";
import { parseHTML } from "linkedom";
import { extractContent, normalizeLanguage, toIsoDate } from "../../core/extract/mod.ts";
import { findLead } from "../../core/extract/lead.ts";

const para = (n: number, topic = "river") =>
  Array.from({ length: n }, (_, i) => `<p>Paragraph ${i + 1} about the ${topic}: it carries enough words, commas, and detail to read as real article prose for the scorer.</p>`).join("\n");

const page = (body: string, head = "") => `<!DOCTYPE html><html lang="en"><head><title>Test page</title>${head}</head><body>${body}</body></html>`;
const extract = (body: string, head = "") => extractContent(page(body, head), "https://site.example/news/story");

describe("boilerplate removal", () => {
  it("drops chrome named by class, id, role, aria-hidden and inline style", () => {
    const r = extract(`
      <div id="onetrust-banner">We value your privacy and use cookies for ads.</div>
      <div role="navigation"><a href="/a">Section A</a> <a href="/b">Section B</a></div>
      <div class="social-share-bar">Share this story with friends today</div>
      <div aria-hidden="true">Hidden promo text that screen readers skip</div>
      <div style="display:none">Invisible upsell text for subscribers only</div>
      <article>${para(6)}</article>
      <div class="newsletter-box">Get our newsletter every morning in your inbox</div>`);
    expect(r.text).toContain("Paragraph 6 about the river");
    for (const s of ["privacy", "Section A", "Share this story", "Hidden promo", "Invisible upsell", "newsletter every"]) {
      expect(r.text).not.toContain(s);
    }
  });

  it("keeps a wrapper whose name looks like chrome when it holds most of the page's text", () => {
    const r = extract(`<div class="layout has-sidebar paywall-ready"><div class="body">${para(8)}</div></div>`);
    expect(r.text).toContain("Paragraph 1 about the river");
    expect(r.text).toContain("Paragraph 8 about the river");
  });

  it("judges class tokens one by one: taxonomy terms, layout states, BEM modifiers and utilities are not chrome", () => {
    // Short posts on pages with much chrome text: the keep-big-wrappers guard cannot save them.
    const footer = ["imprint", "contact", "legal", "partners"].map((t) => `<aside>${para(3, t)}</aside>`).join("");
    const wrappers = [
      `<div class="post-7 post type-post status-publish format-standard hentry category-news tag-social-media tag-ads">`,
      `<div class="clearfix text-formatted field field--name-body field--label-hidden">`,
      `<main class="container overflow-hidden">`,
      `<div class="layout-container has-sidebar">`,
    ];
    for (const open of wrappers) {
      const close = open.startsWith("<main") ? "</main>" : "</div>";
      const r = extract(`${open}${para(3, "harbour")}${close}${footer}`);
      expect(r.text, open).toContain("Paragraph 3 about the harbour");
    }
    // Whole tokens still name chrome.
    const r = extract(`<article>${para(5)}</article><div class="hidden">Hidden upsell text here</div><div class="tag-cloud"><span>Rivers</span> <span>Lakes</span> <span>Harbours</span></div>${footer}`);
    expect(r.text).toContain("Paragraph 5 about the river");
    expect(r.text).not.toContain("Hidden upsell");
    expect(r.text).not.toContain("Harbours");
  });

  it("keeps a chrome-named phrase inside a sentence (a dateline span) but drops one that is its paragraph's only text", () => {
    const r = extract(`<article><p><span class="dateline">KOBE – </span>A total of 6,000 surgical masks have been lost at a hospital, officials said on Tuesday.</p>
      <p><span class="byline">By Jane Reporter</span></p>${para(5)}</article>`);
    expect(r.text).toContain("KOBE – A total of 6,000 surgical masks");
    expect(r.text).not.toContain("Jane Reporter");
  });

  it("removes a rail of three or more look-alike teaser cards", () => {
    const cards = [1, 2, 3, 4].map((i) => `<div class="card"><a href="/s${i}">Story ${i} headline</a><p>Teaser ${i} text.</p></div>`).join("");
    const r = extract(`<article>${para(6)}<div class="more">${cards}</div></article>`);
    expect(r.text).toContain("Paragraph 6");
    expect(r.text).not.toContain("Teaser 2 text");
  });
});

describe("pruning inside the chosen content", () => {
  it("removes link lists and ad labels but keeps link-rich prose", () => {
    const r = extract(`<article>${para(3)}
      <p>The <a href="/report">full report</a> was published on Monday by the agency, and it runs to 200 pages with appendices.</p>
      <p>Advertisement</p>
      ${para(3, "lake")}
      <ul><li><a href="/x">Read: another story</a></li><li><a href="/y">Read: yet another story</a></li></ul>
    </article>`);
    expect(r.text).toContain("was published on Monday by the agency");
    expect(r.text).not.toContain("Advertisement");
    expect(r.text).not.toContain("yet another story");
  });

  it("removes 'read also' teasers: a label with one headline link, and a label left before a removed link list", () => {
    const r = extract(`<article>${para(3)}
      <p><b>YOU MAY BE INTERESTED: <a href="/other">The minister's record in office, year by year</a></b></p>
      ${para(3, "lake")}
      <p>The river's <a href="/gauge">gauge</a>: rising.</p>
      <p>Account: <a href="/u/rivers">@rivers</a></p>
      <p><strong>Read these stories too:</strong></p>
      <ul><li><a href="/x">Why rivers flood in spring and what towns do</a></li><li><a href="/y">The lake that vanished in one summer</a></li></ul>
    </article>`);
    expect(r.text).toContain("Paragraph 3 about the lake");
    expect(r.text).not.toContain("YOU MAY BE INTERESTED");
    expect(r.text).not.toContain("record in office");
    expect(r.text).not.toContain("Read these stories too");
    // Prose with a link, and a short labelled value, are not teasers.
    expect(r.text).toContain("The river's gauge: rising.");
    expect(r.text).toContain("Account: @rivers");
  });

  it("keeps only the first of several sibling articles (the page's own post)", () => {
    const r = extract(`<main><article class="post main">${para(5)}</article><article class="post next">${para(4, "mountain")}</article></main>`);
    expect(r.text).toContain("Paragraph 5 about the river");
    expect(r.text).not.toContain("mountain");
  });

  it("drops a leading dateline and byline, the H1 and headings left at the end", () => {
    const r = extract(`<article><h1>Test page</h1><p>By Jane Reporter</p><p>Posted: Fri 6:45 PM, Feb 16, 2018</p>${para(5)}<h3>More from the site</h3></article>`);
    expect(r.text.startsWith("Paragraph 1 about the river")).toBe(true);
    expect(r.text).not.toContain("More from the site");
    expect(r.markdown).not.toContain("# Test page");
  });

  it("keeps a short sentence that mentions a date", () => {
    const r = extract(`<article><p>The vote is on March 3.</p>${para(5)}</article>`);
    expect(r.text).toContain("The vote is on March 3.");
  });

  it("drops photo captions in figcaption and in image-plus-caption boxes", () => {
    const r = extract(`<article>${para(3)}
      <figure><img src="/a.jpg" alt="A"><figcaption>Caption under the first photo</figcaption></figure>
      <div class="pic"><img src="/b.jpg" alt="B"><p>Caption of the second photo. (AP Photo)</p></div>
      ${para(3, "sea")}</article>`);
    expect(r.text).not.toContain("Caption under the first photo");
    expect(r.text).not.toContain("Caption of the second photo");
    expect(r.text).toContain("Paragraph 3 about the sea");
  });

  it("drops credit lines, calls to follow, subscribe, share or rate, notes on cookies, login, ads and rights, and box labels", () => {
    const notices = [
      "Foto: Erika Muster / Stadtarchiv",
      "Quelle: Landesamt für Statistik, 3. Mai",
      "Crédits photos : Agence Exemple",
      "Abbildung 2: Pegelstand im Frühjahr",
      "Follow the Courier on Twitter and Instagram @courier.",
      "Subscribe now to our print edition for the whole story.",
      "War dieser Artikel hilfreich?",
      "Möchten Sie den Artikel teilen?",
      "Síguenos en nuestras redes",
      "Zapraszamy też do subskrypcji naszego tygodnika.",
      "This entry was posted in News. Bookmark the permalink.",
      "Durch die weitere Nutzung der Seite stimmst du Cookies zu.",
      "Sie sind derzeit nicht angemeldet.",
      "Dieser Beitrag enthält Werbung für eine Marke.",
      "Todos los derechos reservados 2024",
      "Mehr zum Thema",
      "Kontakt:",
      "Das könnte Sie auch interessieren!",
    ];
    const r = extract(`<article>${para(4)}${notices.map((t) => `<p>${t}</p>`).join("")}</article>`);
    expect(r.text).toContain("Paragraph 4 about the river");
    for (const t of notices) expect(r.text).not.toContain(t);
  });

  it("keeps sentences that only mention subscribing or sharing, and a header that holds a credit and a headline", () => {
    const sentence = "Readers who subscribe now pay less, the publisher said, and more of them share articles with friends.";
    const contact = "Kontakt: the press office answers questions on weekdays between nine and five.";
    const r = extract(`<article><div class="head"><span>Foto: Max Muster</span><p>Second team starts training in March with two matches</p></div>${para(4)}<p>${sentence}</p><p>${contact}</p></article>`);
    expect(r.text).toContain(sentence);
    expect(r.text).toContain(contact);
    expect(r.text).toContain("Second team starts training in March");
  });
});

describe("leads", () => {
  const lead = "The council voted on Monday to close the old bridge to cars for good. Cyclists and pedestrians will keep using it while engineers plan the repairs, which could take two years.";
  const deck = "A short deck that sums the story up in a single line.";
  const story = (intro: string) => `<header class="article-header"><h1>Bridge closed</h1><p class="${intro}">${lead}</p><p class="dek">${deck}</p></header><div class="article-body">${para(5)}</div>`;

  it("puts back a lead paragraph that sits in the article's header, outside the body the scorer picks", () => {
    for (const name of ["lead", "article__intro", "standfirst", "c-summary"]) {
      const r = extract(story(name));
      expect(r.text.startsWith(lead)).toBe(true);
      expect(r.text).toContain("Paragraph 5 about the river");
      expect(r.text).not.toContain(deck);
    }
  });

  it("puts back a lead whose first sentence the body repeats", () => {
    const first = lead.slice(0, lead.indexOf(".") + 1);
    const body = `<div class="article-body"><p>${first} The decision followed a report on the state of its piers.</p>${para(5)}</div>`;
    const r = extract(`<header class="article-header"><h1>Bridge closed</h1><p class="lead">${lead}</p></header>${body}`);
    expect(r.text).toContain("Cyclists and pedestrians will keep using it");
  });

  it("leaves out a one-sentence deck, a lead-named box far from the headline, and an unnamed paragraph where the header names a deck", () => {
    const far = parseHTML(page(`<h1>Bridge closed</h1><div class="article-body">${para(30)}</div><div class="more"><p class="lead">${lead}</p></div>`)).document;
    expect(findLead(far.body)).toBeNull();
    expect(extract(story("note")).text).not.toContain("The council voted");
  });
});

describe("metadata normalisation", () => {
  it("reads dates as ISO 8601 UTC, zone-less ones as UTC", () => {
    expect(toIsoDate("2019-11-19T10:04:00-05:00")).toBe("2019-11-19T15:04:00.000Z");
    expect(toIsoDate("2019-11-19T10:04:00")).toBe("2019-11-19T10:04:00.000Z");
    expect(toIsoDate("2019-11-19")).toBe("2019-11-19T00:00:00.000Z");
    expect(toIsoDate("2019-11-19T10:04:00+0100")).toBe("2019-11-19T09:04:00.000Z");
    expect(toIsoDate("Nov 19, 2019")).toBe("2019-11-19T00:00:00.000Z");
    expect(toIsoDate("yesterday")).toBeNull();
    expect(toIsoDate("0000-00-00")).toBeNull();
  });

  it("normalises language tags", () => {
    expect(normalizeLanguage("en_US")).toBe("en-US");
    expect(normalizeLanguage("pt-BR")).toBe("pt-BR");
    expect(normalizeLanguage("English")).toBeNull();
  });

  it("strips the site name from titles, decodes entities, drops 'By' from authors", () => {
    const r = extract(para(5), `
      <meta property="og:title" content="Budget passes after late vote | The Daily Example">
      <meta property="og:site_name" content="The Daily Example">
      <meta name="author" content="By Sam Writer">
      <script type="application/ld+json">{"@type":"NewsArticle","datePublished":"2020-01-02T03:04:05Z","publisher":{"name":"Ignored Publisher"}}</script>`);
    expect(r.title).toBe("Budget passes after late vote");
    expect(r.site_name).toBe("The Daily Example");
    expect(r.author).toBe("Sam Writer");
    expect(r.published_at).toBe("2020-01-02T03:04:05.000Z");
    expect(r.language).toBe("en");
  });

  it("keeps a title whose only separator is part of the headline", () => {
    const r = extract(para(5), `<meta property="og:title" content="Editorial | The view on the harbour: a city at a crossroads">
      <meta property="og:site_name" content="The Harbour Times">`);
    expect(r.title).toBe("Editorial | The view on the harbour: a city at a crossroads");
  });
});

describe("robustness", () => {
  it("returns flat text instead of throwing on pathologically deep markup", () => {
    const deep = `${"<div>".repeat(20000)}<p>deep text survives</p>${"</div>".repeat(20000)}`;
    const r = extractContent(deep, "https://site.example/");
    expect(r.text).toContain("deep text survives");
  });

  it("finds the post behind malformed documents: server warnings before the doctype, no <html> tag, a pasted document inside the article", () => {
    const warning = "<br />\n<b>Warning</b>:  mysql_connect(): Access denied in <b>/www/htdocs/plugin.php</b> on line <b>299</b><br />\n";
    const cases = [
      `${warning}<!DOCTYPE html><html lang="de"><head><title>Post</title></head><body><article>${para(4)}</article></body></html>`,
      `<!DOCTYPE html><head><title>Post</title></head><body><article>${para(4)}</article></body></html>`,
      `<!DOCTYPE html><html><head><title>Post</title></head><body><div class="layout"><article><!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.0 Transitional//EN"><html><body>${para(4)}</body></html></article></div><footer>Imprint</footer></body></html>`,
      `<!DOCTYPE html><html><head><title>Post</title><div class="content">${para(4)}</div></html>`,
    ];
    for (const html of cases) {
      const r = extractContent(html, "https://site.example/post");
      expect(r.text).toContain("Paragraph 1 about the river");
      expect(r.text).toContain("Paragraph 4 about the river");
      expect(r.text).not.toMatch(/Warning|mysql|on line/);
      expect(r.title).toBe("Post");
    }
  });

  it("leaves PHP warnings printed inside the page out of the text", () => {
    const r = extract(`<article>${para(3)}<br />\n<b>Deprecated</b>:  preg_replace(): The /e modifier is deprecated in <b>/www/wp-includes/formatting.php</b> on line <b>82</b><br />${para(2, "lake")}</article>`);
    expect(r.text).toContain("Paragraph 2 about the lake");
    expect(r.text).not.toContain("Deprecated");
  });
});
