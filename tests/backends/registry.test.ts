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
