/**
 * Which items talk about the same thing, so they become one source:
 * - the same outside link (normalised with core/ranking's dedupKey), or a post linking to
 *   another item's discussion page, or the same id seen twice;
 * - near-duplicate texts: word 3-shingle Jaccard ≥ 0.8 (bots cross-posting, copied questions).
 * Near duplicates are found without comparing every pair: shingles (hashed) are ordered rarest first,
 * and two sets with Jaccard ≥ t must share one of the first |A| − ⌈t·|A|⌉ + 1 shingles of each
 * (the prefix filter of Bayardo, Ma & Srikant, "Scaling Up All Pairs Similarity Search",
 * WWW 2007); only pairs that meet there, and whose sizes allow it, are compared exactly.
 */
import { dedupKey } from "../../ranking/normalize-url.ts";

export interface DedupItem {
  id: string;
  url: string;
  linked_url: string | null;
  title: string;
  text: string;
}

export interface DedupOptions {
  /** Jaccard threshold for near-duplicate texts (default 0.8). */
  threshold?: number;
  /** Texts with fewer shingles are too short to call duplicates (default 5). */
  minShingles?: number;
  /** Only the first this many words take part (default 300): duplicates show early. */
  maxWords?: number;
}

class UnionFind {
  private parent: Int32Array;
  constructor(n: number) {
    this.parent = Int32Array.from({ length: n }, (_, i) => i);
  }
  find(i: number): number {
    const p = this.parent;
    while (p[i] !== i) {
      p[i] = p[p[i]!]!;
      i = p[i]!;
    }
    return i;
  }
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    // The smaller index stays the root, so groups come out in input order.
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
}

/** A link specific enough to merge on: not a bare homepage. */
export function linkKey(url: string | null): string | null {
  if (!url || !URL.canParse(url)) return null;
  const u = new URL(url);
  if ((u.pathname === "/" || u.pathname === "") && !u.search) return null;
  return dedupKey(url);
}

/** FNV-1a over UTF-16 code units: a word's 32-bit hash. */
function wordHash(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Characters per word, generously: only this much text is split for `maxWords` words. */
const CHARS_PER_WORD = 12;
/**
 * Word separators for shingles: anything but ASCII letters and digits, Latin/Greek/Cyrillic and
 * other letters up to U+1FFF, and CJK/Hangul. Cheaper than lexical.ts's tokenize (no Unicode
 * normalisation): copies are compared with copies, so accents need no folding.
 */
const SEPARATORS = /[^a-z0-9\u00c0-\u1fff\u3040-\ud7ff\uf900-\ufaff]+/;

/**
 * Word 3-shingles of title + text as 52-bit integer hashes (exact in a double, so Map keys stay
 * numbers; a collision among a few hundred thousand shingles is about as likely as 1 in 10⁵).
 */
export function shingles(title: string, text: string, maxWords = 300): Set<number> {
  const words = `${title} ${text.slice(0, maxWords * CHARS_PER_WORD)}`.toLowerCase().split(SEPARATORS);
  const hashes: number[] = [];
  for (let i = 0; i < words.length && hashes.length < maxWords; i++) if (words[i]) hashes.push(wordHash(words[i]!));
  const n = hashes.length;
  const out = new Set<number>();
  for (let i = 0; i + 2 < n; i++) {
    const a = hashes[i]!;
    const b = hashes[i + 1]!;
    const c = hashes[i + 2]!;
    const hi = (Math.imul(a ^ Math.imul(b, 0x9e3779b1), 0x85ebca77) ^ c) >>> 0;
    const lo = (Math.imul(c ^ Math.imul(b, 0xc2b2ae3d), 0x27d4eb2f) ^ a) & 0xfffff;
    out.add(hi * 0x100000 + lo);
  }
  return out;
}

/** Exact Jaccard of two ascending integer arrays. */
function jaccard(a: Int32Array, b: Int32Array): number {
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      shared++;
      i++;
      j++;
    } else if (a[i]! < b[j]!) i++;
    else j++;
  }
  return shared / (a.length + b.length - shared);
}

/** Pairs of item indices whose texts are near duplicates (prefix-filtered, then exact). */
export function nearDuplicatePairs(items: readonly DedupItem[], opts: DedupOptions = {}): [number, number][] {
  const t = opts.threshold ?? 0.8;
  const minShingles = opts.minShingles ?? 5;
  const sets = items.map((it) => shingles(it.title, it.text, opts.maxWords ?? 300));

  // Global order: rarest shingle first (a counting sort on document frequency; within one
  // frequency, first seen first), so prefixes are short and selective.
  const df = new Map<number, number>();
  for (const s of sets) for (const sh of s) df.set(sh, (df.get(sh) ?? 0) + 1);
  const start = new Int32Array(items.length + 2);
  for (const f of df.values()) start[f + 1]!++;
  for (let f = 1; f < start.length; f++) start[f]! += start[f - 1]!;
  const rank = new Map<number, number>();
  for (const [sh, f] of df) rank.set(sh, start[f]!++);
  const vectors = sets.map((s) => {
    const vec = new Int32Array(s.size);
    let k = 0;
    for (const sh of s) vec[k++] = rank.get(sh)!;
    return vec.sort();
  });

  const order = vectors.map((_, i) => i).filter((i) => vectors[i]!.length >= minShingles);
  order.sort((a, b) => vectors[a]!.length - vectors[b]!.length || a - b);

  const index = new Map<number, number[]>();
  const pairs: [number, number][] = [];
  const seen = new Set<number>();
  for (const x of order) {
    const vx = vectors[x]!;
    const prefix = vx.length - Math.ceil(t * vx.length) + 1;
    const minSize = t * vx.length; // earlier sets are no larger; they must be at least this large
    seen.clear();
    for (let p = 0; p < prefix; p++) {
      for (const y of index.get(vx[p]!) ?? []) {
        if (seen.has(y) || vectors[y]!.length < minSize) continue;
        seen.add(y);
        if (jaccard(vx, vectors[y]!) >= t) pairs.push(x < y ? [x, y] : [y, x]);
      }
    }
    for (let p = 0; p < prefix; p++) {
      const list = index.get(vx[p]!);
      if (list) list.push(x);
      else index.set(vx[p]!, [x]);
    }
  }
  return pairs;
}

/**
 * Groups of item indices that are one source, each group ascending, groups ordered by their
 * first index. Items alone form groups of one.
 */
export function duplicateGroups(items: readonly DedupItem[], opts: DedupOptions = {}): number[][] {
  const uf = new UnionFind(items.length);
  const firstByKey = new Map<string, number>();
  const join = (key: string | null, i: number) => {
    if (key === null) return;
    const first = firstByKey.get(key);
    if (first === undefined) firstByKey.set(key, i);
    else uf.union(first, i);
  };
  items.forEach((it, i) => {
    join(`id ${it.id}`, i);
    const linked = linkKey(it.linked_url);
    join(linked === null ? null : `url ${linked}`, i);
    // A discussion page is a link too: a post sharing an HN thread joins that thread.
    join(`url ${dedupKey(it.url)}`, i);
  });
  for (const [a, b] of nearDuplicatePairs(items, opts)) uf.union(a, b);

  const groups = new Map<number, number[]>();
  items.forEach((_, i) => {
    const root = uf.find(i);
    const group = groups.get(root);
    if (group) group.push(i);
    else groups.set(root, [i]);
  });
  return [...groups.values()];
}
