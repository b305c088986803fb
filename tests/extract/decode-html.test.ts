/**
 * decodeHtml on legacy encodings. TextEncoder only writes UTF-8, so the encoded phrases are written
 * as bytes (checked with Python's codecs: "café".encode("cp1252") etc.).
 */
import { describe, expect, it } from "vitest";
import { charsetFromContentType, charsetFromMeta, decodeHtml } from "../../core/extract/mod.ts";

const hex = (s: string) => Uint8Array.from(s.trim().split(/\s+/), (b) => Number.parseInt(b, 16));
const ascii = (s: string) => new TextEncoder().encode(s); // ASCII is the same bytes in all of these
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

const CAFE_1252 = hex("63 61 66 e9"); // café
const CREME_1252 = hex("43 72 e8 6d 65 20 62 72 fb 6c e9 65"); // Crème brûlée
const NIHONGO_SJIS = hex("93 fa 96 7b 8c ea 83 65 83 58 83 67"); // 日本語テスト
const ZHONGWEN_GBK = hex("d6 d0 ce c4 cd f8 d2 b3"); // 中文网页
const HANGUL_EUCKR = hex("c7 d1 b1 b9 be ee"); // 한국어

const page = (body: Uint8Array, head = "") => concat(ascii(`<html><head>${head}<title>t</title></head><body><p>`), body, ascii("</p></body></html>"));

describe("decodeHtml via the Content-Type header", () => {
  it("windows-1252", () => {
    expect(decodeHtml(page(CAFE_1252), "text/html; charset=windows-1252")).toContain("<p>café</p>");
    expect(decodeHtml(page(CREME_1252), "text/html;charset=ISO-8859-1")).toContain("Crème brûlée");
  });
  it("Shift_JIS", () => {
    expect(decodeHtml(page(NIHONGO_SJIS), 'text/html; charset="Shift_JIS"')).toContain("日本語テスト");
  });
  it("GBK (and its gb2312 label)", () => {
    expect(decodeHtml(page(ZHONGWEN_GBK), "text/html; charset=gbk")).toContain("中文网页");
    expect(decodeHtml(page(ZHONGWEN_GBK), "text/html; charset=GB2312")).toContain("中文网页");
  });
  it("the header wins over a contradicting meta tag", () => {
    const bytes = page(CAFE_1252, '<meta charset="utf-8">');
    expect(decodeHtml(bytes, "text/html; charset=windows-1252")).toContain("café");
  });
});

describe("decodeHtml via a meta tag", () => {
  it("<meta charset>", () => {
    expect(decodeHtml(page(NIHONGO_SJIS, '<meta charset="shift_jis">'), "text/html")).toContain("日本語テスト");
    expect(decodeHtml(page(CAFE_1252, "<meta charset=windows-1252>"), null)).toContain("café");
  });
  it("<meta http-equiv=Content-Type>", () => {
    const head = '<meta http-equiv="Content-Type" content="text/html; charset=gbk">';
    expect(decodeHtml(page(ZHONGWEN_GBK, head), "text/html")).toContain("中文网页");
    const single = "<META HTTP-EQUIV='content-type' CONTENT='text/html;charset=euc-kr'>";
    expect(decodeHtml(page(HANGUL_EUCKR, single), null)).toContain("한국어");
  });
  it("a meta tag saying UTF-16 is read as UTF-8 (the bytes were readable as ASCII)", () => {
    const bytes = concat(ascii('<meta charset="utf-16"><p>'), ascii("caf"), hex("c3 a9"), ascii("</p>"));
    expect(decodeHtml(bytes, null)).toContain("café");
  });
});

describe("decodeHtml via a byte order mark", () => {
  it("UTF-8 BOM, even against a header that says otherwise", () => {
    const bytes = concat(hex("ef bb bf"), ascii("<p>caf"), hex("c3 a9"), ascii("</p>"));
    const text = decodeHtml(bytes, "text/html; charset=windows-1252");
    expect(text).toBe("<p>café</p>"); // and the BOM itself is gone
  });
  it("UTF-16LE and UTF-16BE BOMs", () => {
    const le = concat(hex("ff fe"), hex("3c 00 70 00 3e 00 63 00 61 00 66 00 e9 00"));
    expect(decodeHtml(le, null)).toBe("<p>café");
    const be = concat(hex("fe ff"), hex("00 3c 00 70 00 3e 00 63 00 61 00 66 00 e9"));
    expect(decodeHtml(be, "text/html")).toBe("<p>café");
  });
});

describe("decodeHtml defaults", () => {
  it("is UTF-8 without any declaration", () => {
    expect(decodeHtml(ascii("<p>naïve — ok</p>"), null)).toBe("<p>naïve — ok</p>");
  });
  it("falls back to UTF-8 for labels TextDecoder rejects", () => {
    expect(decodeHtml(ascii("<p>plain ascii</p>"), "text/html; charset=x-no-such-charset")).toBe("<p>plain ascii</p>");
    const bytes = concat(ascii('<meta charset="bogus-9"><p>caf'), hex("c3 a9"), ascii("</p>"));
    expect(decodeHtml(bytes, null)).toContain("café");
  });
  it("an unusable header label gives way to the meta tag", () => {
    expect(decodeHtml(page(CAFE_1252, '<meta charset="windows-1252">'), "text/html; charset=nonsense")).toContain("café");
  });
});

describe("charset helpers", () => {
  it("parses Content-Type parameters", () => {
    expect(charsetFromContentType("text/html; charset=UTF-8")).toBe("UTF-8");
    expect(charsetFromContentType('text/html; foo=bar; charset="Shift_JIS"')).toBe("Shift_JIS");
    expect(charsetFromContentType("text/html")).toBeNull();
    expect(charsetFromContentType(null)).toBeNull();
  });
  it("only looks at the first bytes for meta declarations", () => {
    const late = concat(ascii(`<p>${"x".repeat(5000)}</p>`), ascii('<meta charset="gbk">'));
    expect(charsetFromMeta(late)).toBeNull();
  });
});
