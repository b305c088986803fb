/**
 * Reads a Node response body: decodes gzip/deflate/br with zlib streams and counts the DECODED
 * bytes, destroying every stream once the cap is passed. zlib only produces output as it is read
 * (16 KiB chunks, backpressure through the pipeline), so a compression bomb costs at most the
 * cap plus a few chunks of memory and CPU before it is cut off.
 */
import type { IncomingMessage } from "node:http";
import { once } from "node:events";
import { pipeline, type Readable, type Transform } from "node:stream";
import * as zlib from "node:zlib";
import { BodyTooLarge, UpstreamNetworkError } from "../../core/net/fetch-errors.ts";
import { concat } from "./page-loop.ts";

export const NODE_ACCEPT_ENCODING = "gzip, deflate, br";

// Browsers and undici accept truncated compressed bodies; so do we (finishFlush).
const ZLIB_OPTS: zlib.ZlibOptions = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const BROTLI_OPTS: zlib.BrotliOptions = {
  flush: zlib.constants.BROTLI_OPERATION_FLUSH,
  finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
};

/** `deflate` is zlib-wrapped by the RFC and raw in practice often; the first two bytes tell. */
async function deflateDecoder(res: IncomingMessage): Promise<Transform> {
  let head: Buffer | null = res.read();
  while (head === null && !res.readableEnded && !res.destroyed) {
    await once(res, "readable");
    head = res.read();
  }
  if (head === null) return zlib.createInflateRaw(ZLIB_OPTS);
  res.unshift(head);
  const wrapped = (head[0] & 0x0f) === 8 && head[0] >> 4 <= 7 && (head.length < 2 || ((head[0] << 8) | head[1]) % 31 === 0);
  return wrapped ? zlib.createInflate(ZLIB_OPTS) : zlib.createInflateRaw(ZLIB_OPTS);
}

async function decoderFor(coding: string, res: IncomingMessage): Promise<Transform> {
  switch (coding) {
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip(ZLIB_OPTS);
    case "deflate":
      return deflateDecoder(res);
    case "br":
      return zlib.createBrotliDecompress(BROTLI_OPTS);
    default:
      throw new UpstreamNetworkError(`The page uses the content coding "${coding}", which Quarry cannot decode.`);
  }
}

/** The decoded body, at most `maxBytes`; throws `BodyTooLarge` (streams destroyed) past it. */
export async function readNodeBody(res: IncomingMessage, url: string, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
  const onAbort = () => res.destroy(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
  signal.addEventListener("abort", onAbort, { once: true });
  let last: Readable = res;
  const streams: Readable[] = [res];
  try {
    const codings = (res.headers["content-encoding"] ?? "")
      .split(",")
      .map((c) => c.trim().toLowerCase())
      .filter((c) => c && c !== "identity")
      .reverse();
    if (codings.length > 2) throw new UpstreamNetworkError("The page stacks more content codings than Quarry decodes.");
    const decoders: Transform[] = [];
    for (const coding of codings) decoders.push(await decoderFor(coding, res));
    if (decoders.length > 0) {
      streams.push(...decoders);
      last = pipeline([res, ...decoders] as unknown as [Readable, Transform], () => {}) as unknown as Readable;
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    for await (const chunk of last as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      if (total > maxBytes) throw new BodyTooLarge(url, maxBytes, total);
      chunks.push(chunk);
    }
    if (decoders.length === 0 && !res.complete) throw new UpstreamNetworkError(`The connection to ${url} closed mid-body.`);
    return concat(chunks, total);
  } catch (err) {
    if ((err as { code?: string })?.code?.startsWith("Z_") || (err as { code?: string })?.code?.startsWith("ERR__")) {
      throw new UpstreamNetworkError(`The page at ${url} has a corrupt compressed body.`, String(err), { cause: err });
    }
    throw err;
  } finally {
    signal.removeEventListener("abort", onAbort);
    for (const s of streams) if (!s.destroyed) s.destroy();
  }
}
