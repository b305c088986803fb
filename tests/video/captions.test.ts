import { describe, expect, it } from "vitest";
import { parseCaptions, segmentsText } from "../../core/backends/youtube/caption-formats.ts";
import { yt } from "./helpers.ts";

describe("caption formats", () => {
  it("json3 ASR: skips the window event and aAppend newlines, joins word segs", () => {
    const segments = parseCaptions(yt("timedtext_json3_asr_en.json"))!;
    const raw = JSON.parse(yt("timedtext_json3_asr_en.json")) as { events: { segs?: { utf8: string }[]; aAppend?: number }[] };
    const wordEvents = raw.events.filter((e) => e.segs && !e.aAppend && e.segs.some((s) => s.utf8.trim()));
    expect(segments).toHaveLength(wordEvents.length);
    expect(segments[0]).toEqual({ startMs: 0, durationMs: 5130, text: "in the comments all right oh good I" });
    expect(segments[1]).toEqual({ startMs: 3000, durationMs: 4490, text: "think we found some comments all right" });
    expect(segments.at(-1)).toEqual({ startMs: 2970520, durationMs: 4280, text: "much thanks everybody yes goodbye" });
    expect(segments.every((s) => s.text === s.text.trim() && !s.text.includes("\n"))).toBe(true);
    expect(segmentsText(segments).length).toBeGreaterThan(35_000);
  });

  it("timedtext format 1 XML: seconds, twice-escaped entities, empty lines dropped (synthetic)", () => {
    expect(parseCaptions(yt("timedtext_format1_synthetic.xml"))).toEqual([
      { startMs: 480, durationMs: 3120, text: "Welcome back to the channel & thanks for watching" },
      { startMs: 3600, durationMs: 2900, text: "today we're testing the new battery" },
      { startMs: 6500, durationMs: 4010, text: 'it lasted "twelve hours" on a single charge' },
    ]);
  });

  it("srv3 XML: <p t d> in ms with <s> words (synthetic)", () => {
    expect(parseCaptions(yt("timedtext_srv3_synthetic.xml"))).toEqual([
      { startMs: 480, durationMs: 3120, text: "welcome back to the channel" },
      { startMs: 3600, durationMs: 2900, text: "today we're testing batteries" },
    ]);
  });

  it("an empty body (PO token missing) or an unknown format is no transcript", () => {
    expect(parseCaptions("")).toBeNull();
    expect(parseCaptions("   \n")).toBeNull();
    expect(parseCaptions("WEBVTT\n\n00:00.000 --> 00:01.000\nhi")).toBeNull();
    expect(parseCaptions("{\"foo\":1}")).toBeNull();
    expect(parseCaptions("{\"events\":[]}")).toEqual([]);
  });
});
