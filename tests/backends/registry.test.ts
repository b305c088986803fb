import { describe, expect, it } from "vitest";
import { WEB_BACKENDS } from "../../core/backends/catalogue.ts";
import { createRegistry } from "../../core/backends/registry.ts";

describe("createRegistry", () => {
  it("runs the public upstreams by default and disables what lacks settings", () => {
    const registry = createRegistry({}, WEB_BACKENDS);
    expect(registry.ids("web")).toEqual(["searxng", "duckduckgo", "wikipedia", "brave"]);
    expect(registry.get("duckduckgo")).toMatchObject({ enabled: true, config: { baseUrl: "https://html.duckduckgo.com" } });
    expect(registry.get("wikipedia")).toMatchObject({ enabled: true, config: { baseUrl: "https://{lang}.wikipedia.org" } });
    expect(registry.get("searxng")).toMatchObject({ enabled: false, reason: expect.stringContaining("QUARRY_SEARXNG_URL") });
    expect(registry.get("brave")).toMatchObject({ enabled: false, reason: expect.stringContaining("QUARRY_BRAVE_KEY") });
    expect(registry.ids("video")).toEqual([]);
  });

  it("takes the operator's URLs and keys", () => {
    const registry = createRegistry({
      searxng: { url: " http://searx.local:8888/searx/ " },
      brave: { key: "BSA-1" },
      duckduckgo: { url: "http://127.0.0.1:9100" },
    }, WEB_BACKENDS);
    expect(registry.get("searxng")).toMatchObject({ enabled: true, config: { baseUrl: "http://searx.local:8888/searx" } });
    expect(registry.get("brave")).toMatchObject({ enabled: true, config: { baseUrl: "https://api.search.brave.com", key: "BSA-1" } });
    expect(registry.get("duckduckgo")).toMatchObject({ enabled: true, config: { baseUrl: "http://127.0.0.1:9100" } });
  });

  it("disables a backend whose URL is not http(s), and ignores blank values", () => {
    const registry = createRegistry({ searxng: { url: "ftp://searx" }, wikipedia: { url: "not a url" }, brave: { key: "   " } }, WEB_BACKENDS);
    expect(registry.get("searxng")).toMatchObject({ enabled: false, reason: expect.stringContaining("not an http(s) URL") });
    expect(registry.get("wikipedia")).toMatchObject({ enabled: false });
    expect(registry.get("brave")).toMatchObject({ enabled: false });
    expect(registry.get("nope")).toBeUndefined();
  });
});

describe("the backend catalogue", () => {
  it("is the one list config, request enums and health derive from", async () => {
    const { BACKEND_IDS, CATALOGUE, SOCIAL_PLATFORM_IDS, WEB_BACKEND_IDS } = await import("../../core/backends/catalogue.ts");
    const { SOCIAL_PLATFORMS } = await import("../../core/backends/social/types.ts");
    const { parseConfig } = await import("../../core/config.ts");
    expect(new Set(BACKEND_IDS).size).toBe(CATALOGUE.length);
    // The social item type names the same platforms as the catalogue.
    expect([...SOCIAL_PLATFORMS]).toEqual(SOCIAL_PLATFORM_IDS);
    // Every catalogued backend's variables are read: none can be silently ignored.
    const env = Object.fromEntries(BACKEND_IDS.map((id) => [`QUARRY_${id.toUpperCase()}_KEY`, `key-of-${id}`]));
    const config = parseConfig(env);
    for (const id of BACKEND_IDS) expect(config.backends[id]?.key, id).toBe(`key-of-${id}`);
    expect(WEB_BACKEND_IDS).toEqual(["searxng", "duckduckgo", "wikipedia", "brave"]);
  });
});
