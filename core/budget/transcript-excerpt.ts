/**
 * Token-budgeted transcript excerpts (api.md §5). The transcript is cut into ~30 s windows,
 * the windows are ranked against the query (window-ranking.ts), and the best ones are taken,
 * then their neighbours as context, while the budget lasts; the last piece that does not fit
 * whole is cut at a word. Without any match the excerpt is the opening plus evenly spaced
 * samples. Output is in time order, each piece opened by a `[mm:ss]` marker, " … " between
 * pieces that are not adjacent. The assembled text is recounted at the end, so the budget
 * holds exactly in o200k_base tokens.
 */
import { queryTerms, tokenize } from "../ranking/lexical.ts";
import { formatTimestamp } from "./timestamps.ts";
import { countTokens, truncateToTokens } from "./tokens.ts";
import { buildWindows, DEFAULT_WINDOW_MS, type TimedText, type TranscriptWindow } from "./transcript-windows.ts";
import { rankWindows } from "./window-ranking.ts";

export type Tier = "basic" | "summary" | "detailed" | "full";

/** Tokens of transcript per result (api.md §5); basic carries no transcript. */
export const TIER_TOKEN_BUDGET: Readonly<Record<Tier, number>> = { basic: 0, summary: 200, detailed: 800, full: 4000 };

export interface ExcerptOptions {
  windowMs?: number;
}

/** A gap separator " … " costs at most this many tokens (it is 2 in o200k_base). */
const SEPARATOR_TOKENS = 2;
/** A cut piece shorter than this is noise, not an excerpt. */
const MIN_PIECE_TOKENS = 16;
/** Candidates that did not fit, tried before giving up on filling the rest of the budget. */
const MAX_MISSES = 6;

interface Piece {
  /** First segment, and one past the last; `to` is -1 for a cut piece (never adjacent). */
  from: number;
  to: number;
  text: string;
  tokens: number;
}

function pieceText(segments: readonly TimedText[], from: number, to: number): string {
  let text = formatTimestamp(segments[from]!.startMs);
  for (let i = from; i < to; i++) text += " " + segments[i]!.text;
  return text;
}

function assemble(pieces: readonly Piece[]): string {
  const ordered = [...pieces].sort((a, b) => a.from - b.from);
  let out = "";
  for (let i = 0; i < ordered.length; i++) {
    if (i > 0) out += ordered[i - 1]!.to === ordered[i]!.from ? " " : " … ";
    out += ordered[i]!.text;
  }
  return out;
}

/** Collects pieces under a budget; priorities are the order of `add` calls. */
class Selection {
  readonly pieces: Piece[] = [];
  readonly taken: Uint8Array;
  private used = 0;
  private misses = 0;

  constructor(
    private readonly segments: readonly TimedText[],
    private readonly windows: readonly TranscriptWindow[],
    private readonly budget: number,
  ) {
    this.taken = new Uint8Array(windows.length);
  }

  get remaining(): number {
    return this.budget - this.used - (this.pieces.length > 0 ? SEPARATOR_TOKENS : 0);
  }

  get exhausted(): boolean {
    return this.remaining < MIN_PIECE_TOKENS || this.misses > MAX_MISSES;
  }

  /** Adds window `i` whole when it fits; returns whether it did. */
  addWhole(i: number): boolean {
    if (this.taken[i]) return true;
    const w = this.windows[i]!;
    const text = pieceText(this.segments, w.from, w.to);
    // Cheap bound first: a token is at least one character.
    if (text.length > this.remaining * 12) return this.miss();
    const tokens = countTokens(text);
    if (tokens > this.remaining) return this.miss();
    this.push({ from: w.from, to: w.to, text, tokens }, i);
    return true;
  }

  /** Adds as much of window `i` as fits, from segment `start` on. */
  addCut(i: number, start: number): boolean {
    if (this.taken[i] || this.remaining < MIN_PIECE_TOKENS) return false;
    const w = this.windows[i]!;
    const text = truncateToTokens(pieceText(this.segments, start, w.to), this.remaining);
    if (!text.includes(" ")) return false; // only the marker survived
    this.push({ from: start, to: -1, text, tokens: countTokens(text) }, i);
    return true;
  }

  private miss(): boolean {
    this.misses++;
    return false;
  }

  private push(piece: Piece, window: number): void {
    // A piece joined to a neighbour by a space costs about one token more; a gap costs " … ".
    const adjacent = this.pieces.some((p) => p.to === piece.from || (piece.to !== -1 && piece.to === p.from));
    this.used += piece.tokens + (this.pieces.length === 0 ? 0 : adjacent ? 1 : SEPARATOR_TOKENS);
    this.pieces.push(piece);
    this.taken[window] = 1;
  }

  /** The assembled text, pieces dropped from the least important end until it fits exactly. */
  finish(): string | null {
    const pieces = [...this.pieces];
    while (pieces.length > 0) {
      const text = assemble(pieces);
      if (countTokens(text) <= this.budget) return text;
      if (pieces.length === 1) return truncateToTokens(text, this.budget) || null;
      pieces.pop();
    }
    return null;
  }
}

/** First segment of window `w` naming a query term, one segment early for context. */
function hitSegment(segments: readonly TimedText[], w: TranscriptWindow, terms: ReadonlySet<string>): number {
  for (let i = w.from; i < w.to; i++) {
    if (tokenize(segments[i]!.text).some((t) => terms.has(t))) return Math.max(w.from, i - 1);
  }
  return w.from;
}

/**
 * Window indexes for a transcript without a match: the opening, then evenly spaced samples,
 * one more than an estimate (4 characters a token) says fits, so the last can be cut to fill.
 */
function sampleOrder(windows: readonly TranscriptWindow[], budget: number): number[] {
  const n = windows.length;
  const avgChars = windows.reduce((sum, w) => sum + w.text.length, 0) / n;
  const fit = Math.ceil(budget / Math.max(1, avgChars / 4 + 8));
  const picks = Math.min(n, fit + 1);
  const order: number[] = [];
  for (let k = 0; k < picks; k++) {
    const i = Math.floor((k * n) / picks);
    if (order[order.length - 1] !== i) order.push(i);
  }
  return order;
}

/**
 * The query-focused excerpt of a transcript in at most `maxTokens` o200k tokens, or null
 * when there is no text or no budget.
 */
export function transcriptExcerpt(
  segments: readonly TimedText[],
  query: string,
  maxTokens: number,
  options: ExcerptOptions = {},
): string | null {
  if (maxTokens <= 0 || segments.length === 0) return null;
  const windows = buildWindows(segments, options.windowMs ?? DEFAULT_WINDOW_MS);
  return selectExcerpt(segments, windows, rankWindows(windows, query).scores, query, maxTokens);
}

function selectExcerpt(
  segments: readonly TimedText[],
  windows: readonly TranscriptWindow[],
  scores: Float64Array,
  query: string,
  maxTokens: number,
): string | null {
  const hits = windows.map((w) => w.index).filter((i) => scores[i]! > 0).sort((a, b) => scores[b]! - scores[a]! || a - b);
  const sel = new Selection(segments, windows, maxTokens);

  if (hits.length === 0) {
    for (const i of sampleOrder(windows, maxTokens)) {
      if (sel.exhausted) break;
      if (!sel.addWhole(i) && sel.addCut(i, windows[i]!.from)) break;
    }
    return sel.finish();
  }

  const terms = new Set(queryTerms(query));
  let cut = false;
  const chosenHits: number[] = [];
  for (const i of hits) {
    if (sel.exhausted) break;
    if (sel.addWhole(i)) chosenHits.push(i);
    else if (!cut && sel.addCut(i, hitSegment(segments, windows[i]!, terms))) cut = true;
  }
  // Context: the window after each chosen hit, then the one before, best hits first.
  for (const i of chosenHits) {
    for (const j of [i + 1, i - 1]) {
      if (sel.exhausted) break;
      if (j >= 0 && j < windows.length) sel.addWhole(j);
    }
  }
  return sel.finish();
}

/** The whole transcript in time order, cut to `maxTokens` (tier full). */
export function fullTranscript(segments: readonly TimedText[], maxTokens: number, options: ExcerptOptions = {}): string | null {
  if (maxTokens <= 0 || segments.length === 0) return null;
  return selectFull(segments, buildWindows(segments, options.windowMs ?? DEFAULT_WINDOW_MS), maxTokens);
}

function selectFull(segments: readonly TimedText[], windows: readonly TranscriptWindow[], maxTokens: number): string | null {
  // One string in time order, then one cut: cheaper than counting window by window.
  const text = windows.map((w) => pieceText(segments, w.from, w.to)).join(" ");
  return truncateToTokens(text, maxTokens) || null;
}

/** The `transcript_snippet` of a result for a tier: null for basic. */
export function excerptForTier(segments: readonly TimedText[], query: string, tier: Tier): string | null {
  return transcriptDigest(segments, query, tier).snippet;
}

export interface TranscriptDigest {
  snippet: string | null;
  /** Share of the query's distinct terms spoken in the whole transcript, in [0, 1]. */
  coverage: number;
}

/**
 * The snippet for a tier and the query coverage of the whole transcript, from one pass of
 * windowing and ranking (the operation needs both: the snippet to show, coverage to score).
 */
export function transcriptDigest(segments: readonly TimedText[], query: string, tier: Tier): TranscriptDigest {
  if (segments.length === 0) return { snippet: null, coverage: 0 };
  const windows = buildWindows(segments);
  const { scores, coverage } = rankWindows(windows, query);
  const budget = TIER_TOKEN_BUDGET[tier];
  if (budget === 0) return { snippet: null, coverage };
  const snippet = tier === "full" ? selectFull(segments, windows, budget) : selectExcerpt(segments, windows, scores, query, budget);
  return { snippet, coverage };
}
