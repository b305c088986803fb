/** A page's stored content within QUARRY_JOB_PAGE_BYTES (core/jobs/sizes.ts): what is cut, what is left out, in UTF-8 bytes. */
import { describe, expect, it } from "vitest";
import { capPageData, utf8Bytes } from "../../core/jobs/sizes.ts";

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

describe("utf8Bytes", () => {
  it("counts as UTF-8 does: 1, 2, 3 and 4 bytes (a surrogate pair), a lone surrogate as 3", () => {
    for (const s of ["", "abc", "é", "日本語", "😀x😀", "a\u00e9\u65e5\ud83d\ude00"]) expect(utf8Bytes(s), s).toBe(Buffer.byteLength(s));
    expect(utf8Bytes("\ud83d")).toBe(3);
  });
});

describe("capPageData", () => {
  it("leaves a page under the cap as it is", () => {
    const data = { title: "t", markdown: "short" };
    expect(capPageData(data, 1000)).toEqual({ data, truncated: [], cut: 0 });
  });

  it("shares the cap among the formats: a small one kept whole, the large ones cut, a screenshot that does not fit left out", () => {
    const data = { title: "A page", final_url: "http://x.test/", markdown: "é".repeat(40_000), html: "<p>" + "x".repeat(100_000), links: Array.from({ length: 50 }, (_, i) => ({ text: `l${i}`, url: `http://x.test/${i}` })), screenshot: "A".repeat(60_000) };
    const { data: out, truncated, cut } = capPageData(data, 64 * 1024);
    expect(bytes(out)).toBeLessThanOrEqual(64 * 1024);
    expect(out.links).toEqual(data.links); // under its share: whole
    expect(out.screenshot).toBeUndefined(); // a cut image is no image
    expect(truncated).toEqual(["html", "screenshot", "markdown"]);
    expect(out.truncated).toEqual(truncated);
    expect((out.markdown as string).length).toBeGreaterThan(5000);
    expect(data.markdown.startsWith(out.markdown as string)).toBe(true);
    expect((out.html as string).length).toBeGreaterThan(10_000);
    expect(out.title).toBe("A page");
    expect(cut).toBe(bytes(data) - bytes(out));
  });

  it("never cuts a character in half, and keeps a list's first items", () => {
    const { data: out } = capPageData({ text: "😀".repeat(10_000), links: Array.from({ length: 5000 }, (_, i) => `http://x.test/${i}`) }, 8192);
    expect(bytes(out)).toBeLessThanOrEqual(8192);
    expect(/^(😀)+$/u.test(out.text as string)).toBe(true);
    expect((out.links as string[])[0]).toBe("http://x.test/0");
  });
});
