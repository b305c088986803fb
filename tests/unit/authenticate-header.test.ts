/** The authenticator keeps the last well-formed header's secret (issue #33): what it answers does not change. */
import { describe, expect, it } from "vitest";
import { memoryPorts } from "../../adapters/shared/bootstrap.ts";
import { parseConfig } from "../../core/config.ts";
import { Authenticator } from "../../core/keys/authenticate.ts";
import { createKey, ensureAccount } from "../../core/keys/service.ts";
import { MemoryLogger } from "../helpers/app.ts";

describe("Authenticator, the same header again", () => {
  it("answers each request as a first one would: revoked on the next request, malformed and other keys told apart", async () => {
    const ports = memoryPorts(new MemoryLogger());
    const config = parseConfig({});
    await ensureAccount(ports.keys, "acme", "free", config.plans, Date.now());
    const a = await createKey(ports.keys, { account: "acme", name: "a", scopes: ["search"] }, Date.now());
    const b = await createKey(ports.keys, { account: "acme", name: "b", scopes: ["search"] }, Date.now());
    const auth = new Authenticator(ports.keys);
    const header = `Bearer ${a.key}`;
    expect((await auth.authenticate(header)).key.name).toBe("a");
    expect((await auth.authenticate(`${header}`)).key.name).toBe("a");
    expect((await auth.authenticate(`Bearer ${b.key}`)).key.name).toBe("b");
    await expect(auth.authenticate("Bearer qry_123")).rejects.toMatchObject({ code: "invalid_auth" });
    expect((await auth.authenticate(header)).key.name).toBe("a");
    await expect(auth.authenticate(`${header}x`)).rejects.toMatchObject({ code: "invalid_auth" });
    await ports.keys.revokeKey(a.id, new Date().toISOString());
    await expect(auth.authenticate(header)).rejects.toMatchObject({ code: "invalid_key" });
    expect((await auth.authenticate(`Bearer ${b.key}`)).key.name).toBe("b");
  });
});
