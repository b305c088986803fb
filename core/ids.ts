/**
 * Ids: ULIDs (48 bits of milliseconds, then 80 random bits, in Crockford's base 32), monotonic
 * within this process: an id made in the same millisecond as the last one (or in an earlier one,
 * if the clock stepped back) is the last one's random part plus one, under the last one's time,
 * so ids sort by creation. The same rule as ulidx's `monotonicFactory`, which this replaces: it
 * encoded the time afresh for every id (with four checks of it) and incremented the random part
 * character by character through string copies, a twentieth of the gateway's own work per request
 * on Deno (issue #33). Here the time's text is kept for its millisecond and the random part is
 * held as four numbers of 20 bits (four characters each), the last incremented in place.
 *
 * Random bytes are drawn from the system's generator 4 KB at a time; each byte gives one of 32
 * characters (256 = 8 × 32, so none is favoured). Ids are names, not secrets (key secrets come
 * from keys/secret.ts).
 */
const ENCODING = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/** The two characters of every 10-bit value. */
const PAIRS: string[] = Array.from({ length: 1024 }, (_, i) => ENCODING[i >> 5]! + ENCODING[i & 31]!);
const TIME_MAX = 2 ** 48 - 1;
const GROUP = 1 << 20;

const pool = new Uint8Array(4096);
let taken = pool.length;
function randomChar(): number {
  if (taken >= pool.length) {
    crypto.getRandomValues(pool);
    taken = 0;
  }
  return pool[taken++]! >> 3;
}
/** Four random characters as one 20-bit value. */
function randomGroup(): number {
  return (randomChar() << 15) | (randomChar() << 10) | (randomChar() << 5) | randomChar();
}
const quad = (n: number): string => PAIRS[n >>> 10]! + PAIRS[n & 1023]!;

function encodeTime(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms > TIME_MAX) throw new Error(`A ULID's time must be a whole number of milliseconds from 0 to 2^48 - 1: ${ms}`);
  let text = "";
  for (let i = 0; i < 10; i++) {
    const mod = ms % 32;
    text = ENCODING[mod]! + text;
    ms = (ms - mod) / 32;
  }
  return text;
}

let lastTime = -1;
let timeText = "";
/** The random part: r0..r3, 20 bits each; `head` is r0..r2's text. */
let r0 = 0, r1 = 0, r2 = 0, r3 = 0;
let head = "";

/** A monotonic ULID for `now` (26 characters). */
export function ulid(now: number): string {
  if (now > lastTime) {
    timeText = encodeTime(now);
    lastTime = now;
    r0 = randomGroup();
    r1 = randomGroup();
    r2 = randomGroup();
    r3 = randomGroup();
    head = quad(r0) + quad(r1) + quad(r2);
  } else if (++r3 === GROUP) {
    // Carried into the characters before (nearly never: the random part starts anywhere in 2^80).
    r3 = 0;
    if (++r2 === GROUP) {
      r2 = 0;
      if (++r1 === GROUP) {
        r1 = 0;
        if (++r0 === GROUP) throw new Error("ULID random part exhausted within one millisecond");
      }
    }
    head = quad(r0) + quad(r1) + quad(r2);
  }
  return timeText + head + quad(r3);
}

/** `req_` + 26 ULID characters (api.md §3). */
export function requestId(now: number): string {
  return `req_${ulid(now)}`;
}

/** The shape of every key id: anything else names no key. */
export const KEY_ID = /^key_[0-9A-Z]{26}$/;

/** `key_` + 26 ULID characters (the spec's `key_<id>`). */
export function keyId(now: number): string {
  return `key_${ulid(now)}`;
}

/** `crawl_` / `batch_` + 26 ULID characters: a site-level job (api.md §9). */
export function jobId(kind: "crawl" | "batch", now: number): string {
  return `${kind}_${ulid(now)}`;
}

/** `mon_` + 26 ULID characters: a monitor (issue #31). */
export function monitorId(now: number): string {
  return `mon_${ulid(now)}`;
}

/** `run_` + 26 ULID characters: one run of a monitor. */
export function monitorRunId(now: number): string {
  return `run_${ulid(now)}`;
}
