/**
 * PostgreSQL's postings blocks as bytes (sql-store.ts, `quarry_collection_blocks`): a block holds some of one
 * term's entries in order of passage number, each entry a passage's number, the term's weighted count f in it
 * and the passage's weighted length, written as unsigned LEB128 varints (7 bits a byte, low bits first):
 *
 *   varint(gap × 2 + (f ≠ 1 ? 1 : 0))   [varint(f) when f ≠ 1]   varint(length)
 *
 * where gap is the entry's number less the previous entry's, and for a block's first entry less the block's
 * base: KEY_STEP × its key (the `block` column, the number of its first entry when it was written divided by
 * KEY_STEP, rounded down: an INTEGER that holds numbers up to 2^35, as the previous layout did). A block is
 * closed only when full (over a hundred entries, each a number of its own), so the next block's first number
 * lies more than KEY_STEP above the last block's base and keys never collide. A weighted count of 1 (three
 * entries in four) costs no byte of its own. Counts and lengths are capped at
 * CAP, as the previous layout (and SQLite's ranking, which never meets such passages) held them.
 * At 100,000 passages of news an entry takes 3.2 bytes, against 8 for a bigint of the previous layout.
 */

/** Passage numbers per unit of a block's key. */
export const KEY_STEP = 16;

/** The largest weighted count or length an entry holds (two varint bytes). */
export const CAP = 16383;

/** A term's entries in a block, decoded. */
export interface Entry {
  id: number;
  tf: number;
  length: number;
}

function varint(out: number[], x: number): void {
  while (x >= 128) {
    out.push((x % 128) + 128);
    x = Math.floor(x / 128);
  }
  out.push(x);
}

/** An entry's bytes, its number given as the gap from the previous one (or from its block's key). */
export function entryBytes(out: number[], gap: number, tf: number, length: number): void {
  const f = Math.min(tf, CAP);
  varint(out, gap * 2 + (f === 1 ? 0 : 1));
  if (f !== 1) varint(out, f);
  varint(out, Math.min(Math.round(length), CAP));
}

/** A block as a row holds it: its key (its first entry's number when written, over KEY_STEP), its last entry's number, and its bytes. */
export interface Block {
  block: number;
  last: number;
  items: Uint8Array;
}

/**
 * Cuts a term's new entries (numbers ascending, all above `tail.last`) into blocks of at most `maxBytes`:
 * the first ones go on at the end of `tail` (the term's last block, whose bytes are `tail.bytes` long) while
 * it has room, the rest into new blocks keyed by their first entry. Blocks need `maxBytes` well above an
 * entry's largest size (ten bytes) for their keys to stay apart. `appended` is what goes on the tail's
 * bytes (empty when nothing does); `blocks` are the new rows.
 */
export function cutBlocks(entries: readonly Entry[], tail: { block: number; last: number; bytes: number } | null, maxBytes: number): { appended: Block | null; blocks: Block[] } {
  const blocks: Block[] = [];
  let appended: Block | null = null;
  // The block being filled: the tail, or a new one (none before the first entry when there is no tail).
  let cur: number[] | null = null, key = 0, prev = 0, used = 0, onTail = false;
  if (tail) {
    cur = [];
    key = tail.block;
    prev = tail.last;
    used = tail.bytes;
    onTail = true;
  }
  const close = () => {
    if (!cur?.length) return;
    const b = { block: key, last: prev, items: Uint8Array.from(cur) };
    if (onTail) appended = b;
    else blocks.push(b);
  };
  const one: number[] = [];
  for (const e of entries) {
    one.length = 0;
    if (cur) entryBytes(one, e.id - prev, e.tf, e.length);
    if (!cur || used + one.length > maxBytes) {
      close();
      onTail = false;
      cur = [];
      key = Math.floor(e.id / KEY_STEP);
      prev = key * KEY_STEP;
      used = 0;
      one.length = 0;
      entryBytes(one, e.id - prev, e.tf, e.length);
    }
    for (const b of one) cur.push(b);
    used += one.length;
    prev = e.id;
  }
  close();
  return { appended, blocks };
}

/** A block's bytes for its entries (numbers ascending, none below its base): for the blocks a removal rewrites. */
export function encodeBlock(entries: readonly Entry[], key: number): Uint8Array {
  const out: number[] = [];
  let prev = key * KEY_STEP;
  for (const e of entries) {
    entryBytes(out, e.id - prev, e.tf, e.length);
    prev = e.id;
  }
  return Uint8Array.from(out);
}

/** A block's entries, decoded (for removals, which rewrite the blocks they touch). */
export function decodeBlock(items: Uint8Array, key: number): Entry[] {
  const out: Entry[] = [];
  const ids = new Float64Array(items.length >> 1), tfs = new Uint16Array(ids.length), lengths = new Uint16Array(ids.length);
  const n = decodeInto(items, key, ids, tfs, lengths, 0);
  for (let i = 0; i < n; i++) out.push({ id: ids[i]!, tf: tfs[i]!, length: lengths[i]! });
  return out;
}

/**
 * Decodes a block's entries into the arrays from index k on (an entry takes at least two bytes, so a block
 * of b bytes holds at most b/2 of them); returns the index after the last written. The search's hot loop.
 */
export function decodeInto(items: Uint8Array, key: number, ids: Float64Array, tfs: Uint16Array, lengths: Uint16Array, k: number): number {
  let o = 0, prev = key * KEY_STEP;
  const end = items.length;
  while (o < end) {
    let b = items[o++]!, x = b & 127;
    for (let m = 128; b >= 128; m *= 128) {
      b = items[o++]!;
      x += (b & 127) * m;
    }
    const flag = x % 2;
    prev += (x - flag) / 2;
    let tf = 1;
    if (flag) {
      b = items[o++]!;
      tf = b & 127;
      if (b >= 128) tf += (items[o++]! & 127) * 128;
    }
    b = items[o++]!;
    let length = b & 127;
    if (b >= 128) length += (items[o++]! & 127) * 128;
    ids[k] = prev;
    tfs[k] = tf;
    lengths[k++] = length;
  }
  return k;
}

/**
 * The entries of a block of the previous layout (data format 2: a bigint[] of passage number × 2^28 + count ×
 * 2^14 + length) as array_send gives it: a 20-byte header (dimensions, null flag, element type, length, lower
 * bound), then per entry a 4-byte length and the 8-byte value, big-endian.
 */
export function format2Entries(bytes: Uint8Array): Entry[] {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (v.byteLength < 20 || v.getInt32(0) !== 1) return [];
  const count = v.getInt32(12), out: Entry[] = [];
  for (let i = 0, o = 20 + 4; i < count; i++, o += 12) {
    const hi = v.getUint32(o), lo = v.getUint32(o + 4);
    out.push({ id: hi * 16 + (lo >>> 28), tf: (lo >>> 14) & 16383, length: lo & 16383 });
  }
  return out;
}
