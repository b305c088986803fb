/**
 * PostgreSQL's postings blocks as bytes (adapters/collections/postings.ts): what is cut into blocks, appended
 * to a term's last block or rewritten decodes to the same entries, blocks stay within their size and their
 * keys apart, and a block of data format 2 (array_send of a bigint[]) reads back as it was packed.
 */
import { describe, expect, it } from "vitest";
import { CAP, cutBlocks, decodeBlock, decodeInto, encodeBlock, format2Entries, KEY_STEP, type Block, type Entry } from "../../adapters/collections/postings.ts";

function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
}

/** Entries of numbers ascending from `from`, gaps up to `maxGap`, counts mostly 1. */
function entries(n: number, from: number, maxGap: number, seed = 1): Entry[] {
  const r = rng(seed);
  const out: Entry[] = [];
  let id = from;
  for (let i = 0; i < n; i++) {
    id += 1 + Math.floor(r() * maxGap);
    out.push({ id, tf: r() < 0.75 ? 1 : 2 + Math.floor(r() * 40), length: 1 + Math.floor(r() * 600) });
  }
  return out;
}

const decodeAll = (blocks: Block[]) => blocks.flatMap((b) => decodeBlock(b.items, b.block));

describe("postings blocks", () => {
  it("cuts a term's entries into blocks of at most the size asked, keyed apart in order, that decode to the same entries", () => {
    for (const [maxGap, from] of [[1, 0], [3, 1000], [5000, 7], [40_000_000, 2 ** 34 - 2 ** 31]] as const) {
      const list = entries(2000, from, maxGap);
      const { appended, blocks } = cutBlocks(list, null, 1024);
      expect(appended).toBeNull();
      expect(blocks.length).toBeGreaterThan(1);
      expect(decodeAll(blocks)).toEqual(list);
      for (const [i, b] of blocks.entries()) {
        expect(b.items.length).toBeLessThanOrEqual(1024);
        expect(b.block * KEY_STEP).toBeLessThanOrEqual(decodeBlock(b.items, b.block)[0]!.id);
        expect(b.last).toBe(decodeBlock(b.items, b.block).at(-1)!.id);
        if (i > 0) expect(b.block).toBeGreaterThan(blocks[i - 1]!.block);
      }
    }
  });

  it("appends to the term's last block while it has room, delta-coded from its last number, then starts new ones", () => {
    const list = entries(600, 10, 4, 3);
    const first = cutBlocks(list.slice(0, 100), null, 1024).blocks;
    expect(first).toHaveLength(1);
    const tail = first[0]!;
    const { appended, blocks } = cutBlocks(list.slice(100), { block: tail.block, last: tail.last, bytes: tail.items.length }, 1024);
    expect(appended!.block).toBe(tail.block);
    // What the store's `items || excluded.items` makes of the tail.
    const grown = new Uint8Array([...tail.items, ...appended!.items]);
    expect(grown.length).toBeLessThanOrEqual(1024);
    expect(grown.length).toBeGreaterThan(1024 - 10);
    expect(appended!.last).toBe(decodeBlock(grown, tail.block).at(-1)!.id);
    expect([...decodeBlock(grown, tail.block), ...decodeAll(blocks)]).toEqual(list);
    expect(blocks[0]!.block).toBeGreaterThan(tail.block);
    // A full tail takes nothing.
    const full = cutBlocks([{ id: list.at(-1)!.id + 5, tf: 1, length: 3 }], { block: tail.block, last: list.at(-1)!.id, bytes: 1024 }, 1024);
    expect(full.appended).toBeNull();
    expect(full.blocks).toHaveLength(1);
  });

  it("rewrites a block without some entries under the same key; counts and lengths are capped", () => {
    const list = entries(200, 5000, 9, 5);
    const [b] = cutBlocks(list, null, 4096).blocks;
    const kept = decodeBlock(b!.items, b!.block).filter((e) => e.id % 3 !== 0);
    expect(decodeBlock(encodeBlock(kept, b!.block), b!.block)).toEqual(kept);
    const capped = cutBlocks([{ id: 99, tf: 70_000, length: 123_456.4 }, { id: 100, tf: 1, length: 0.4 }], null, 1024).blocks;
    expect(decodeAll(capped)).toEqual([{ id: 99, tf: CAP, length: CAP }, { id: 100, tf: 1, length: 0 }]);
    // Three entries in four have a count of 1, which takes no byte: two bytes for a small gap and length.
    expect(cutBlocks([{ id: 1, tf: 1, length: 5 }, { id: 2, tf: 1, length: 5 }], null, 1024).blocks[0]!.items).toHaveLength(4);
    const ids = new Float64Array(4), tfs = new Uint16Array(4), lengths = new Uint16Array(4);
    expect(decodeInto(capped[0]!.items, capped[0]!.block, ids, tfs, lengths, 1)).toBe(3);
    expect([...ids]).toEqual([0, 99, 100, 0]);
  });

  it("reads data format 2's packed bigints as array_send gives them", () => {
    const packed = [[1, 1, 40], [17, 3, 16383], [2 ** 34 + 5, 16383, 7]] as const;
    const bytes = new Uint8Array(20 + packed.length * 12);
    const v = new DataView(bytes.buffer);
    v.setInt32(0, 1); // dimensions
    v.setInt32(8, 20); // int8's type oid
    v.setInt32(12, packed.length);
    v.setInt32(16, 1);
    packed.forEach(([id, tf, length], i) => {
      const value = (BigInt(id) << 28n) | (BigInt(tf) << 14n) | BigInt(length);
      v.setInt32(20 + i * 12, 8);
      v.setBigInt64(24 + i * 12, value);
    });
    expect(format2Entries(bytes)).toEqual(packed.map(([id, tf, length]) => ({ id, tf, length })));
  });
});
