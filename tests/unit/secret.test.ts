import { describe, expect, it } from "vitest";
import { generateSecret, hashSecret, isWellFormedSecret, maskSecret } from "../../core/keys/secret.ts";
import { escalatedScopes } from "../../core/keys/scopes.ts";

describe("key secrets", () => {
  it("are qry_ plus 64 lowercase hex characters, different every time", () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^qry_[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
    expect(isWellFormedSecret(a)).toBe(true);
  });

  it("carry 256 bits: every hex digit appears across many secrets", () => {
    const seen = new Set(Array.from({ length: 50 }, generateSecret).join("").slice(4));
    for (const d of "0123456789abcdef") expect(seen.has(d)).toBe(true);
  });

  it("reject near misses", () => {
    const good = "qry_" + "a".repeat(64);
    for (const bad of ["qry_" + "a".repeat(63), "qry_" + "A".repeat(64), "qrx_" + "a".repeat(64), good + " ", "qry_" + "g".repeat(64), ""]) {
      expect(isWellFormedSecret(bad)).toBe(false);
    }
  });

  it("hash to the SHA-256 hex digest of the whole secret", async () => {
    // sha256("qry_" + "0"*64), computed independently with coreutils sha256sum.
    expect(await hashSecret("qry_" + "0".repeat(64))).toBe("fd24b70542d0ceb00e8b32077933c7ea6794a07062259f84dc7b0d7c3b9d7a4e");
    const h = await hashSecret(generateSecret());
    expect(h).toMatch(/^[0-9a-f]{64}$/);
  });

  it("mask as prefix, first 4, three dots, last 4", () => {
    expect(maskSecret("qry_ab12" + "0".repeat(56) + "cd34")).toBe("qry_ab12...cd34");
  });

  it("never grant scopes the granting key lacks", () => {
    expect(escalatedScopes(["search"], ["search", "keys"])).toEqual([]);
    expect(escalatedScopes(["search", "scrape"], ["search", "keys"])).toEqual(["scrape"]);
  });
});
