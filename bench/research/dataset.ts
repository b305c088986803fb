/**
 * The research question set (bench/research/set/*.json, see its README): loading, the pages
 * as served HTML, and the labels the metrics read.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface LabelledSentence {
  text: string;
  answers: boolean;
}

export interface BenchPage {
  on: boolean;
  broken: boolean;
  title: string;
  sentences: LabelledSentence[];
}

export interface BenchQuestion {
  id: string;
  split: "dev" | "holdout" | "holdout2" | "holdout3" | "holdout4" | "holdout5" | "holdout6" | "holdout7" | "holdout8" | "holdout9" | "holdout10" | "holdout11" | "holdout12";
  question: string;
  facts: RegExp[];
  pages: BenchPage[];
}

interface RawQuestion {
  id: string;
  split: "dev" | "holdout" | "holdout2" | "holdout3" | "holdout4" | "holdout5" | "holdout6" | "holdout7" | "holdout8" | "holdout9" | "holdout10" | "holdout11" | "holdout12";
  question: string;
  facts: string[];
  pages: { on: boolean; broken?: boolean; title: string; s: string[] }[];
}

const SET = new URL("./set/", import.meta.url).pathname;

export function loadQuestions(): BenchQuestion[] {
  const files = readdirSync(SET).filter((f) => f.endsWith(".json")).sort();
  const raw = files.flatMap((f) => JSON.parse(readFileSync(join(SET, f), "utf8")) as RawQuestion[]);
  return raw
    .map((q) => ({
      id: q.id,
      split: q.split,
      question: q.question,
      facts: q.facts.map((f) => new RegExp(f, "i")),
      pages: q.pages.map((p) => ({
        on: p.on,
        broken: p.broken === true,
        title: p.title,
        sentences: p.s.map((s) => ({ text: s.replace(/^\* /, ""), answers: s.startsWith("* ") })),
      })),
    }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A plain article page: site chrome around a title and paragraphs of two sentences each. */
export function pageHtml(page: BenchPage, site: string): string {
  const paragraphs: string[] = [];
  for (let i = 0; i < page.sentences.length; i += 2) paragraphs.push(page.sentences.slice(i, i + 2).map((s) => s.text).join(" "));
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(page.title)} | ${site}</title></head><body>
<header><nav><a href="/">${site}</a> <a href="/about">About us</a> <a href="/contact">Contact</a></nav></header>
<main><article><h1>${escape(page.title)}</h1>
${paragraphs.map((p) => `<p>${escape(p)}</p>`).join("\n")}
</article></main>
<footer><p>Copyright 2024 ${site}. All rights reserved.</p></footer></body></html>`;
}
