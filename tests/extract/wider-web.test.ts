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
