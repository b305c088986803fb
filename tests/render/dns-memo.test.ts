/** The browser proxy's lookups: shared while in flight, kept for a while, failures for less. */
import { describe, expect, it } from "vitest";
import { memoResolver } from "../../adapters/browser/dns-memo.ts";

function counting(answers: Record<string, string[]>) {
  const calls: string[] = [];
  const release: Array<() => void> = [];
  const resolver = (host: string) => {
    calls.push(host);
    return new Promise<string[]>((ok, fail) =>
      release.push(() => (answers[host] ? ok(answers[host]!) : fail(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" })))));
  };
  return { calls, resolver, settle: () => release.splice(0).forEach((r) => r()) };
}

describe("memoResolver", () => {
  it("shares one lookup among concurrent askers of the same name, whatever its case", async () => {
    const dns = counting({ "cdn.example": ["203.0.113.7"] });
    const memo = memoResolver(dns.resolver);
    const asked = Array.from({ length: 30 }, (_, i) => memo(i % 2 ? "CDN.example" : "cdn.example"));
    dns.settle();
    expect(await Promise.all(asked)).toEqual(Array(30).fill(["203.0.113.7"]));
    expect(dns.calls).toEqual(["cdn.example"]);
  });

  it("keeps an answer for its time to live, then asks again", async () => {
    let now = 0;
    const dns = counting({ "a.example": ["203.0.113.1"] });
    const memo = memoResolver(dns.resolver, { ttlMs: 1_000, now: () => now });
    const first = memo("a.example");
    dns.settle();
    await first;
    now = 999;
    await memo("a.example");
    expect(dns.calls).toHaveLength(1);
    now = 1_000;
    const again = memo("a.example");
    dns.settle();
    await again;
    expect(dns.calls).toHaveLength(2);
  });

  it("keeps a failure for a shorter time, and every asker sees the failure", async () => {
    let now = 0;
    const dns = counting({});
    const memo = memoResolver(dns.resolver, { ttlMs: 60_000, failTtlMs: 100, now: () => now });
    const asked = [memo("gone.example"), memo("gone.example")];
    dns.settle();
    for (const a of asked) await expect(a).rejects.toThrow(/ENOTFOUND/);
    await expect(memo("gone.example")).rejects.toThrow(/ENOTFOUND/);
    expect(dns.calls).toHaveLength(1);
    now = 100;
    const later = memo("gone.example");
    dns.settle();
    await expect(later).rejects.toThrow(/ENOTFOUND/);
    expect(dns.calls).toHaveLength(2);
  });

  it("holds at most `max` names, dropping the oldest", async () => {
    const dns = counting({ "a.example": ["203.0.113.1"], "b.example": ["203.0.113.2"], "c.example": ["203.0.113.3"] });
    const memo = memoResolver(dns.resolver, { max: 2 });
    for (const h of ["a.example", "b.example", "c.example"]) {
      const p = memo(h);
      dns.settle();
      await p;
    }
    const p = memo("a.example");
    dns.settle();
    await p;
    expect(dns.calls).toEqual(["a.example", "b.example", "c.example", "a.example"]);
  });
});
