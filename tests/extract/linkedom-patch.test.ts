/**
 * linkedom is installed with one patch (patches/linkedom+0.18.12.patch, applied by patch-package on
 * `npm install`): a node's event-listener map is made on its first listener instead of for every
 * node parsed, which took extraction from about 43 to about 60 pages per CPU second. These tests
 * check that the installed copy carries the patch (an install that skipped it would quietly be slow)
 * and that events still behave as before: listeners fire, bubble, stop and come off.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parseHTML } from "linkedom";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);

describe("the patched linkedom", () => {
  it("is what npm installed, in both its module builds", () => {
    const root = require.resolve("linkedom/package.json").replace(/package\.json$/, "");
    for (const build of ["esm", "cjs"]) {
      const source = readFileSync(`${root}${build}/interface/event-target.js`, "utf8");
      const constructor = /constructor\(\) \{([^}]*)\}/.exec(source)?.[1] ?? "";
      expect(constructor, `${build}: the constructor registers nothing`).not.toMatch(/wm\.set/);
      expect(source, `${build}: the map is made on the first listener`).toMatch(/if \(!map\)\s*wm\.set\(this, map = new Map\)/);
    }
  });

  it("still delivers events: bubbling, once, stopPropagation and removal", () => {
    const { document, Event } = parseHTML("<html><body><div id=outer><p id=inner>text</p></div></body></html>");
    const outer = document.getElementById("outer")!;
    const inner = document.getElementById("inner")!;
    const seen: string[] = [];
    const onInner = () => seen.push("inner");
    inner.addEventListener("ping", onInner);
    inner.addEventListener("ping", () => seen.push("inner-once"), { once: true });
    outer.addEventListener("ping", (e: Event) => seen.push(`outer:${(e.target as Element).id}`));
    inner.dispatchEvent(new Event("ping", { bubbles: true }));
    inner.dispatchEvent(new Event("ping", { bubbles: false }));
    expect(seen).toEqual(["inner", "inner-once", "outer:inner", "inner"]);

    seen.length = 0;
    inner.removeEventListener("ping", onInner);
    // Removing from a node that never had a listener is allowed and does nothing.
    document.body.removeEventListener("ping", onInner);
    inner.addEventListener("ping", (e: Event) => { seen.push("stopper"); e.stopPropagation(); });
    inner.dispatchEvent(new Event("ping", { bubbles: true }));
    expect(seen).toEqual(["stopper"]);
    // A node with no listener dispatches without error.
    expect(document.body.dispatchEvent(new Event("ping"))).toBe(true);
  });
});
