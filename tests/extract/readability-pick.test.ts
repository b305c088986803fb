/**
 * readabilityPick must pick exactly what Readability picks with its plain retry loop, while
 * skipping retries on short pages. Each case runs both on twin documents (parsed and pruned alike)
 * and compares the picks.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Readability } from "@mozilla/readability";
import { loadExtractLibraries } from "../../core/lazy.ts";
import { removeBoilerplate } from "../../core/extract/boilerplate.ts";
import { parseDocument } from "../../core/extract/dom.ts";
import { readabilityPick } from "../../core/extract/readability-pick.ts";
import { article } from "../helpers/articles.ts";

beforeAll(() => loadExtractLibraries());

/** Counts re-parses of any element's contents (`innerHTML` set), to see the retries skipped. */
let restore: (() => void) | null = null;
function countReparses(): { count: number } {
  const doc = parseDocument("<p>x</p>");
  let proto: object | null = Object.getPrototypeOf(doc.body);
  while (proto && !Object.getOwnPropertyDescriptor(proto, "innerHTML")) proto = Object.getPrototypeOf(proto);
  const original = Object.getOwnPropertyDescriptor(proto!, "innerHTML")!;
  const counter = { count: 0 };
  Object.defineProperty(proto!, "innerHTML", {
    ...original,
    set(value: string) {
      counter.count++;
      original.set!.call(this, value);
    },
  });
  restore = () => Object.defineProperty(proto!, "innerHTML", original);
  return counter;
}
afterEach(() => {
  restore?.();
  restore = null;
});

/** The page as selectMainContent hands it to Readability. */
function prepared(html: string): { document: Document; body: Element } {
  const document = parseDocument(html);
  const body = document.body!;
  removeBoilerplate(body);
  return { document, body };
}

function both(html: string): { ours: string; theirs: string; reparses: number; plainReparses: number } {
  const a = prepared(html);
  const b = prepared(html);
  const counter = countReparses();
  const ours = readabilityPick(a.document, a.body, { retryBelow: 1500 });
  const reparses = counter.count;
  counter.count = 0;
  const theirs = new Readability<Element>(b.document, { keepClasses: true, disableJSONLD: true, charThreshold: 1500, serializer: (n) => n as Element }).parse()?.content ?? null;
  return {
    ours: ours?.outerHTML ?? "",
    theirs: theirs?.outerHTML ?? "",
    reparses,
    plainReparses: counter.count,
  };
}

const prose = (n: number) =>
  Array.from({ length: n }, (_, i) => `<p>Short note ${i + 1}: the council met on Tuesday, voted, and adjourned early.</p>`).join("\n");

describe("readabilityPick", () => {
  it("on a short page whose first attempt keeps all its text, picks it without the three retries", () => {
    const r = both(`<!DOCTYPE html><html><head><title>Note</title></head><body><div class="story">${prose(6)}</div></body></html>`);
    expect(r.ours).toBe(r.theirs);
    expect(r.ours).toContain("Short note 6");
    expect(r.plainReparses).toBe(4);
    expect(r.reparses).toBe(0);
  });

  it("runs the attempts as before when none keeps all the text, with the same pick", () => {
    const r = both(`<!DOCTYPE html><html><head><title>Note</title></head><body><div class="menu-wrap"><span>Home</span> <span>About us</span></div><div class="story">${prose(6)}</div><div>Contact: 555 0100</div></body></html>`);
    expect(r.ours).toBe(r.theirs);
  });

  it("leaves long pages and pages with content in the head to Readability's own loop", () => {
    const long = both(`<!DOCTYPE html><html><head><title>Note</title></head><body><div>${prose(40)}</div></body></html>`);
    expect(long.ours).toBe(long.theirs);
    expect(long.reparses).toBe(0);
    const head = both(`<!DOCTYPE html><html><head><title>Note</title><p>Stray paragraph in the head.</p></head><body><div>${prose(6)}</div></body></html>`);
    expect(head.ours).toBe(head.theirs);
    expect(head.reparses).toBe(head.plainReparses);
  });

  // Re-parses: the first page's first attempt keeps the body's whole text (none); on the others all
  // four attempts run, as in Readability's loop (the last one's fourth attempt keeps all the text).
  it.each([
    ["1ace8c85", 0],
    ["042bb7b5", 4],
    ["0dd13570", 4],
    ["358cc4a0", 4],
  ])("picks what Readability picks on short benchmark page %s", (id, reparses) => {
    const r = both(article(id).html);
    expect(r.ours).toBe(r.theirs);
    expect(r.plainReparses).toBe(4);
    expect(r.reparses).toBe(reparses);
  });
});
