/**
 * Caption bodies → timed segments. Three formats reach us:
 * - json3 (`fmt=json3`): `events[]` with `tStartMs`, `dDurationMs`, `segs[{utf8, tOffsetMs}]`;
 *   ASR tracks open with a window-definition event without `segs` and mark line breaks with
 *   `aAppend: 1` events holding only "\n" (tests/fixtures/upstream/youtube/timedtext_json3_asr_en.json).
 * - timedtext format 1 XML: `<text start="1.2" dur="3.4">` in seconds, entities often
 *   escaped twice (`&amp;#39;`).
 * - srv3 XML (`fmt=srv3`, the ANDROID default): `<p t="1200" d="3400">` in ms, words in `<s>`.
 */
import { asCount, asRecord, asString } from "./json.ts";

export interface CaptionSegment {
  startMs: number;
  durationMs: number;
  text: string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] !== "#") return ENTITIES[ref.toLowerCase()] ?? whole;
    const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

function clean(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** json3 body → segments; null when it is not a json3 document. */
export function parseJson3(body: string): CaptionSegment[] | null {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  const events = asRecord(value)?.events;
  if (!Array.isArray(events)) return null;
  const segments: CaptionSegment[] = [];
  for (const raw of events) {
    const event = asRecord(raw);
    const segs = event?.segs;
    if (!event || !Array.isArray(segs)) continue; // window and pen definitions
    let text = "";
    for (const seg of segs) text += asString(asRecord(seg)?.utf8) ?? "";
    text = clean(text);
    if (!text) continue; // `aAppend` line breaks
    segments.push({ startMs: asCount(event.tStartMs) ?? 0, durationMs: asCount(event.dDurationMs) ?? 0, text });
  }
  return segments;
}

function attr(attrs: string, name: string): string | null {
  const m = new RegExp(`\\b${name}="([^"]*)"`).exec(attrs);
  return m ? m[1]! : null;
}

/** Element text with inner tags (`<s>`, `<font>`, `<b>`) removed and entities decoded, twice-escaped ones too. */
function xmlText(inner: string): string {
  const once = decodeEntities(inner.replace(/<[^>]*>/g, ""));
  return clean(/&(#x?[0-9a-f]+|[a-z]+);/i.test(once) ? decodeEntities(once.replace(/<[^>]*>/g, "")) : once);
}

/** timedtext format 1 or srv3 XML → segments; null when it is neither. */
export function parseTimedTextXml(body: string): CaptionSegment[] | null {
  const segments: CaptionSegment[] = [];
  let matched = false;
  for (const m of body.matchAll(/<text\b([^>]*)>([\s\S]*?)<\/text>|<text\b([^>]*)\/>/g)) {
    matched = true;
    const attrs = m[1] ?? m[3] ?? "";
    const text = xmlText(m[2] ?? "");
    const start = Number(attr(attrs, "start"));
    if (!text || !Number.isFinite(start)) continue;
    const dur = Number(attr(attrs, "dur") ?? "0");
    segments.push({ startMs: Math.round(start * 1000), durationMs: Number.isFinite(dur) ? Math.round(dur * 1000) : 0, text });
  }
  if (matched) return segments;
  for (const m of body.matchAll(/<p\b([^>]*)>([\s\S]*?)<\/p>|<p\b([^>]*)\/>/g)) {
    matched = true;
    const attrs = m[1] ?? m[3] ?? "";
    const text = xmlText(m[2] ?? "");
    const start = Number(attr(attrs, "t"));
    if (!text || !Number.isFinite(start)) continue;
    segments.push({ startMs: start, durationMs: Number(attr(attrs, "d") ?? "0") || 0, text });
  }
  return matched || /<(transcript|timedtext)\b/.test(body) ? segments : null;
}

/**
 * Any caption body → segments in time order. null when the body is empty (what timedtext
 * answers a request that lacks a PO token) or in no known format.
 */
export function parseCaptions(body: string): CaptionSegment[] | null {
  const trimmed = body.trimStart();
  if (!trimmed) return null;
  const segments = trimmed.startsWith("{") ? parseJson3(trimmed) : trimmed.startsWith("<") ? parseTimedTextXml(trimmed) : null;
  if (!segments) return null;
  return segments.sort((a, b) => a.startMs - b.startMs);
}

/** The flat text of a transcript. */
export function segmentsText(segments: readonly CaptionSegment[]): string {
  return segments.map((s) => s.text).join(" ");
}
