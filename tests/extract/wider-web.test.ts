/**
 * Extraction rules from the multilingual (wider web) set, on small pages shaped like the real ones:
 * each case fails without its rule.
 */
import { describe, expect, it } from "vitest";
import { extractContent } from "../../core/extract/mod.ts";

const para = (n: number, topic = "river") =>
  Array.from({ length: n }, (_, i) => `<p>Paragraph ${i + 1} about the ${topic}: it carries enough words, commas, and detail to read as real article prose for the scorer.</p>`).join("\n");

const page = (body: string, head = "") => `<!DOCTYPE html><html lang="en"><head><title>Test page</title>${head}</head><body>${body}</body></html>`;
const extract = (body: string, head = "") => extractContent(page(body, head), "https://site.example/news/story", { formats: ["text"] });

/** Chrome text enough that no single block of the post holds 30 % of the page (the keep-big-wrappers guard). */
const footer = ["imprint", "contact", "legal", "partners"].map((t) => `<aside>${para(3, t)}</aside>`).join("");

describe("page-builder and component names", () => {
  it("keeps Adobe Experience Manager text components (cmp-text, cmp-container)", () => {
    const blocks = ["harbour", "dunes", "tides"].map((t) => `<div class="cmp-text" id="text-${t}">${para(2, t)}</div>`).join("");
    const r = extract(`<main><div class="cmp-container">${blocks}</div></main>${footer}`);
    for (const t of ["harbour", "dunes", "tides"]) expect(r.text).toContain(`Paragraph 2 about the ${t}`);
  });

  it("keeps Elementor text widgets but still drops its share widget", () => {
    const widget = (t: string) =>
      `<div class="elementor-element elementor-widget elementor-widget-text-editor"><div class="elementor-widget-container"><div class="elementor-text-editor">${para(2, t)}</div></div></div>`;
    const r = extract(`<div class="elementor-widget-wrap">${widget("harbour")}${widget("dunes")}${widget("tides")}
      <div class="elementor-element elementor-widget elementor-widget-share-buttons"><div class="elementor-widget-container">Share on Facebook, Share on X, Share by mail</div></div>
      </div>${footer}`);
    for (const t of ["harbour", "dunes", "tides"]) expect(r.text).toContain(`Paragraph 2 about the ${t}`);
    expect(r.text).not.toContain("Share on Facebook");
  });
});

describe("chrome names", () => {
  it("drops a news-letter box and WordPress's post metadata line", () => {
    const r = extract(`<div class="post"><h1>Bridge closed</h1>${para(6)}
      <p class="postmetadata alt">This entry was published on Wednesday, 4 May 2022 at 10:12 and filed under Town. You can follow any responses through the feed, which the theme prints under every post it shows.</p></div>
      <div class="news-letter-section"><span class="lead">Never miss a story: we have many exciting topics for you every week in your inbox.</span></div>`);
    expect(r.text).toContain("Paragraph 6 about the river");
    expect(r.text).not.toContain("This entry was published");
    expect(r.text).not.toContain("Never miss a story");
  });
});

describe("leads without a lead name", () => {
  const lead = "The council voted on Monday to close the old bridge to cars for good. Cyclists and pedestrians will keep using it while engineers plan the repairs, which could take two years.";
  const body = `<div class="article-body">${para(5)}</div>`;

  it("puts back the opening paragraph a header or hero box holds as an <h2> or a styled <p>", () => {
    for (const opening of [`<h2 class="h2 text-xl">${lead}</h2>`, `<div class="hero-text"><p class="mb-2">${lead}</p></div>`]) {
      const r = extract(`<header class="post-head"><h1>Bridge closed</h1><div class="meta-row"><span>May 4, 2022</span></div>${opening}</header>${body}`);
      expect(r.text.startsWith(lead), opening).toBe(true);
      expect(r.text).toContain("Paragraph 5 about the river");
    }
  });

  it("takes a lead after a row of share icons (not a photo it would caption)", () => {
    const icons = ["facebook", "twitter", "mail"].map((n) => `<a href="/s/${n}"><img src="/${n}.png" alt=""></a>`).join("");
    const r = extract(`<div class="row"><h1>Bridge closed</h1><div class="icons">${icons}</div><h3>${lead}</h3></div><div class="article-body">${para(5)}</div>`);
    expect(r.text.startsWith(lead)).toBe(true);
  });

  it("does not repeat a lead the body already holds with other inline markup", () => {
    // The lead's own text reads "two years ." (a space at the inline element's edge).
    const marked = lead.replace("two years.", "<em>two years</em>.");
    const r = extract(`<header><h1>Bridge closed</h1><p class="xl">${marked}</p></header><div class="article-body"><p>${marked}</p>${para(5)}</div>`);
    expect(r.text.split("The council voted").length).toBe(2);
  });

  it("leaves out a photo caption, a one-sentence subtitle, chrome-named boxes and another story's teaser", () => {
    const caption = "In this file photo, members of the council walk across the old bridge on a sunny morning. The bridge was built in 1898 and has carried cars, trams and horses over the river since then.";
    const teaser = "Elsewhere in the city, the market hall reopened after its roof was repaired. Traders said the first weekend brought more visitors than they had hoped for, despite the rain.";
    const subtitle = "The old bridge over the river will be closed to cars for good after a vote on Monday by the council";
    const pages = [
      `<h1>Bridge closed</h1><div class="image top"><img src="/a.jpg"><p>${caption}</p></div>${body}`,
      `<h1>Bridge closed</h1><h2>${subtitle}</h2>${body}`,
      `<h1>Bridge closed</h1><div class="author-bio"><p>${teaser}</p></div>${body}`,
      `<h1>Bridge closed</h1><div class="grid"><article class="card"><p>${teaser}</p></article></div><main>${body}</main>`,
    ];
    for (const html of pages) {
      const r = extract(html);
      expect(r.text, html.slice(0, 80)).toContain("Paragraph 5 about the river");
      for (const s of [caption, teaser, subtitle]) expect(r.text).not.toContain(s.slice(0, 40));
    }
  });
});

describe("JSON-LD body fallback", () => {
  it("puts the header's lead before an articleBody taken from JSON-LD", () => {
    const lead = "Snow on a solar roof does more than cut the yield. Its weight strains the panels and their mounts, and experts warn owners against clearing it from the roof themselves.";
    const body = Array.from({ length: 8 }, (_, i) => `Body paragraph ${i + 1} of the story, which the page only renders with scripts, so the markup holds none of it.`).join("\n");
    const ld = { "@context": "https://schema.org", "@type": "NewsArticle", headline: "Snow on the roof", articleBody: body };
    const html = `<header><h1>Snow on the roof</h1><p class="text-xl">${lead}</p></header><div id="app"><p>Loading the story, please wait a moment.</p></div>`;
    const r = extract(html, `<script type="application/ld+json">${JSON.stringify(ld)}</script>`);
    expect(r.text.startsWith(lead)).toBe(true);
    expect(r.text).toContain("Body paragraph 8 of the story");
  });
});

describe("the headline a lead follows", () => {
  const lead = "The council voted on Monday to close the old bridge to cars for good. Cyclists and pedestrians will keep using it while engineers plan the repairs, which could take two years.";
  const nav = Array.from({ length: 30 }, (_, i) => `<li><a href="/s${i}">Section ${i}</a></li>`).join("");
  const story = `<header class="article-header"><h1>Bridge closed to cars</h1><div class="teaser"><p>${lead}</p></div></header><div class="article-body">${para(5)}</div>`;
  const run = (before: string) =>
    extractContent(`<!DOCTYPE html><html><head><title>Bridge closed to cars | The Riverside Gazette</title></head><body>${before}<ul class="topics">${nav}</ul>${story}</body></html>`, "https://site.example/news/bridge", { formats: ["text"] });

  it("is the <h1> that says the page's title, not a site-name, menu-label or empty logo <h1> in the page's header before it", () => {
    for (const before of [
      `<header class="site-header"><h1>The Riverside Gazette, news for the valley</h1></header>`,
      `<div class="navbar"><h1>Navigation</h1></div>`,
      `<div class="logo-box"><h1><img src="/logo.png" alt=""></h1></div>`,
    ]) {
      expect(run(before).text.startsWith(lead), before).toBe(true);
    }
  });
});

describe("comment sections", () => {
  const comments = `<p>Great piece, I walked over that bridge every day as a child and will miss driving across it.</p><p>Totally disagree with the council here, the repairs could have been done in half the time.</p>`;

  it("cuts the content at a comments label in its last part, with the comments after it", () => {
    for (const label of ["12 Comments", "3 Kommentare", "Leave a Reply", "Comentarios (4)"]) {
      const r = extract(`<div class="story">${para(6)}<h3>${label}</h3><div class="thread">${comments}</div></div>`);
      expect(r.text, label).toContain("Paragraph 6 about the river");
      expect(r.text, label).not.toContain("Great piece");
      expect(r.text, label).not.toContain(label);
    }
  });

  it("keeps what follows a comment count near the top of the article", () => {
    const r = extract(`<div class="story"><p><span>3 Kommentare</span></p>${para(6)}</div>`);
    expect(r.text).toContain("Paragraph 6 about the river");
    expect(r.text).toContain("Paragraph 1 about the river");
  });
});
