/**
 * Real pages of the article-extraction benchmark (tests/fixtures/article-extraction): metadata as the pages state it (checked against the raw HTML
 * by hand), key sentences of the ground truth present, visible boilerplate of the page absent.
 */
import { describe, expect, it } from "vitest";
import { extractContent } from "../../core/extract/mod.ts";
import { article } from "../helpers/articles.ts";

interface Case {
  id: string;
  title: string;
  language: string;
  published_at: string | null;
  site_name: string | null;
  author: string | null;
  /** Sentences of the ground truth the text must contain. */
  sentences: string[];
  /** Visible text of the raw page that is chrome, not article. */
  boilerplate: string[];
}

const cases: Case[] = [
  {
    id: "16c30add", // vox.com, JSON-LD headline differs from og:title; the page has a cookie banner
    title: "Delhi air pollution: The law that’s helping fuel the city’s poor air quality",
    language: "en",
    published_at: "2019-11-08T20:30:00.000Z", // 2019-11-08T15:30:00-05:00 in the page
    site_name: "Vox",
    author: "Umair Irfan",
    sentences: [
      "Another cloud of choking smoke and dust is set to descend upon the 20 million residents of Delhi this week",
      "“The problem can be solved,” Prakash said.",
    ],
    boilerplate: [
      "you consent to our use of cookies and other tracking technologies",
      "Share this on Facebook",
      "Follow Vox on Twitter",
      "Skip to main content",
    ],
  },
  {
    id: "1ace8c85", // techcrunch.com, og:title carries " – TechCrunch"
    title: "New York State Attorney General reportedly investigating WeWork",
    language: "en-US",
    published_at: "2019-11-19T04:58:46.000Z",
    site_name: "TechCrunch",
    author: "Catherine Shu",
    sentences: [
      "WeWork is reportedly being investigated by the New York State Attorney General.",
      "including layoffs at Meetup, which it acquired for $200 million in 2017.",
    ],
    boilerplate: ["@catherineshu"],
  },
  {
    id: "232a43fb", // macrumors.com, with a comment section and "related" rails
    title: "13-Inch MacBook Pro With Scissor Keyboard Expected in First Half of 2020",
    language: "en",
    published_at: "2019-11-18T10:45:00.000Z",
    site_name: "MacRumors.com",
    author: "Joe Rossignol",
    sentences: [
      "Following the 16-inch MacBook Pro, Apple plans to release a new 13-inch MacBook Pro with a scissor switch keyboard",
      "The entry-level 13-inch MacBook Pro was last updated in July",
    ],
    boilerplate: ["Got a tip for us?", "Top Rated Comments", "Apple Pro Display XDR", "Anonymous form"],
  },
  {
    id: "3252222e", // Brazilian Portuguese WordPress blog
    title: "A Fantástica Loja dos Materiais Educativos",
    language: "pt-BR",
    published_at: "2018-08-23T09:00:40.000Z",
    site_name: "Como Educar Seus Filhos",
    author: "Carlos Nadalim",
    sentences: [
      "O prof. Carlos Nadalim apresenta, neste vídeo, uma loja incrível nos EUA",
      "um guia completo e totalmente gratuito para introduzir seus filhos no universo da Alfabetização.",
    ],
    boilerplate: ["Artigos relacionados", "Deixe uma resposta", "Pular para o conteúdo", "6 Mitos sobre o Aprendizado da Leitura"],
  },
  {
    id: "85439e26", // Japanese patent-firm blog
    title: "商品の改造が商標法違反に！？",
    language: "ja",
    published_at: "2016-12-01T02:05:35.000Z",
    site_name: "特許業務法人ライトハウス国際特許事務所",
    author: null,
    sentences: ["先日、不正に改造したiPhoneを販売したとして、商標法違反の疑いで20代の男性が逮捕されたというニュースを耳にしました。", "※「iPhone」は、Apple Inc.の商標です。"],
    boilerplate: ["受付時間：平日9:00〜18:00", "「あずきバー」事件", "All rights reserved"],
  },
];

/** Markdown with links and escapes undone, to compare against plain sentences. */
function markdownAsText(md: string): string {
  return md
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, "$1")
    .replace(/\*\*|__/g, "")
    .replace(/\s+/g, " ");
}

describe.each(cases)("benchmark page $id", (c) => {
  const page = article(c.id);
  const result = extractContent(page.html, page.url);

  it("reads the metadata the page states", () => {
    expect(result.title).toBe(c.title);
    expect(result.language).toBe(c.language);
    expect(result.published_at).toBe(c.published_at);
    expect(result.site_name).toBe(c.site_name);
    expect(result.author).toBe(c.author);
  });

  it("keeps the article's key sentences", () => {
    for (const s of c.sentences) {
      expect(page.truth).toContain(s); // the sentence really is article text
      expect(result.text).toContain(s);
      expect(markdownAsText(result.markdown)).toContain(s);
    }
  });

  it("drops the page's chrome", () => {
    for (const b of c.boilerplate) {
      expect(page.html).toContain(b); // present in the raw page
      expect(result.text).not.toContain(b);
      expect(result.markdown).not.toContain(b);
    }
  });

  it("returns absolute links and non-empty HTML", () => {
    expect(result.html.length).toBeGreaterThan(500);
    expect(result.html).not.toMatch(/<script|<style|\sclass=|\sstyle=/i);
    for (const link of result.links) expect(link.url).toMatch(/^https?:\/\//);
  });
});

describe("onlyMainContent: false", () => {
  it("returns the whole cleaned body", () => {
    const page = article("16c30add");
    const main = extractContent(page.html, page.url);
    const full = extractContent(page.html, page.url, { onlyMainContent: false });
    expect(full.text).toContain("Another cloud of choking smoke");
    expect(full.text).toContain("Skip to main content");
    expect(full.text).toContain("Editorial Ethics and Guidelines");
    expect(full.text.length).toBeGreaterThan(main.text.length);
    expect(full.html).not.toMatch(/<script|<style/i);
    expect(full.title).toBe(main.title);
  });
});

describe("formats", () => {
  it("renders only what is asked for, and the same text whatever is asked", () => {
    const page = article("16c30add");
    const all = extractContent(page.html, page.url);
    const text = extractContent(page.html, page.url, { formats: ["text"] });
    expect(text.text).toBe(all.text);
    expect(text.title).toBe(all.title);
    expect([text.html, text.markdown, text.links]).toEqual(["", "", []]);
    const some = extractContent(page.html, page.url, { formats: ["markdown", "links"] });
    expect(some.markdown).toBe(all.markdown);
    expect(some.links).toEqual(all.links);
    expect(some.html).toBe("");
  });
});
