/**
 * A transcript cut into time windows of about `windowMs`: the units excerpts are ranked and
 * assembled from. A window closes early at a sentence end once it is past 60 % of its span
 * (manual captions are punctuated; ASR text is not, so it falls back to time alone).
 */

/** A timed line of a transcript (same shape as the caption parsers' segments). */
export interface TimedText {
  startMs: number;
  durationMs: number;
  text: string;
}

export interface TranscriptWindow {
  index: number;
  startMs: number;
  /** Segment range [from, to) in the transcript. */
  from: number;
  to: number;
  text: string;
}

export const DEFAULT_WINDOW_MS = 30_000;
const SENTENCE_END = /[.!?…]["')\]]?$/;

export function buildWindows(segments: readonly TimedText[], windowMs = DEFAULT_WINDOW_MS): TranscriptWindow[] {
  const windows: TranscriptWindow[] = [];
  let from = 0;
  const close = (to: number) => {
    const parts: string[] = [];
    for (let i = from; i < to; i++) parts.push(segments[i]!.text);
    windows.push({ index: windows.length, startMs: segments[from]!.startMs, from, to, text: parts.join(" ") });
    from = to;
  };
  for (let i = 0; i < segments.length; i++) {
    const start = segments[from]!.startMs;
    if (i > from && segments[i]!.startMs - start >= windowMs) close(i);
    const seg = segments[i]!;
    const span = seg.startMs + seg.durationMs - segments[from]!.startMs;
    if (span >= windowMs * 0.6 && SENTENCE_END.test(seg.text)) close(i + 1);
  }
  if (from < segments.length) close(segments.length);
  return windows;
}
