/**
 * Reads a stream whole, at most `maxBytes` of it: past that the stream is cancelled and
 * `tooLarge()` is thrown. For request bodies and downloaded files alike, so nothing is held
 * beyond its cap.
 */
export async function readAllCapped(stream: ReadableStream<Uint8Array>, maxBytes: number, tooLarge: (received: number) => Error): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(size);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
