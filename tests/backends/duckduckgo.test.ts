import { describe, expect, it } from "vitest";
import { ddgRegion, duckduckgo, unwrapDdgLink } from "../../core/backends/duckduckgo.ts";
import { answer, fixture, query } from "./helpers.ts";

const cfg = { baseUrl: "https://html.duckduckgo.com" };

describe("duckduckgo.parseResponse on the recorded no-JS page", () => {
  const outcome = duckduckgo.parseResponse(answer(fixture("duckduckgo/html_results_exit_nvim.html")), query());

  it("returns all 30 results, ranked 1..30", () => {
    if (!outcome.ok) throw new Error(outcome.error.message);
    expect(outcome.results).toHaveLength(30);
    expect(outcome.results.map((r) => r.rank)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });

  it("unwraps the /l/?uddg= redirects to the target URLs", () => {
    if (!outcome.ok) throw new Error(outcome.error.message);
    expect(outcome.results[0]).toEqual({
      title: "vi - How do I exit the Vim editor? - Stack Overflow",
      url: "https://stackoverflow.com/questions/11828270/how-do-i-exit-the-vim-editor",
      content: expect.stringMatching(/^In order to exit Vim, you can exit while/),
      published_at: null,
      rank: 1,
    });
    expect(outcome.results[1]!.url).toBe("https://askubuntu.com/questions/24406/how-to-close-vim-from-the-command-line");
    for (const r of outcome.results) {
      expect(r.url).toMatch(/^https:\/\/(stackoverflow|askubuntu)\.com\//);
      expect(r.title).not.toMatch(/<|&#x27;|&quot;/);
      expect(r.title.length).toBeGreaterThan(0);
    }
    // Entities in titles are decoded: "doesn&#x27;t" in the markup.
    expect(outcome.results[3]!.title).toBe("vi - How to exit the Vim editor when :q or :x doesn't work ...");
  });

  it("never returns more than maxResults", () => {
    const few = duckduckgo.parseResponse(answer(fixture("duckduckgo/html_results_exit_nvim.html")), query({ maxResults: 5 }));
    expect(few.ok && few.results.map((r) => r.rank)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe("duckduckgo.parseResponse on pages without results", () => {
  it("reports the JavaScript-only page as blocked, not as no results", () => {
    const outcome = duckduckgo.parseResponse(answer(fixture("duckduckgo/js_page_bad_user_agent.html")), query());
    expect(outcome).toEqual({ ok: false, error: { class: "blocked", message: expect.stringContaining("JavaScript") } });
  });

  it("reports the bot challenge as captcha, with HTTP 200 or 202", () => {
    const page = fixture("duckduckgo/html_anomaly_challenge_synthetic.html");
    for (const status of [200, 202]) {
      const outcome = duckduckgo.parseResponse(answer(page, status), query());
      expect(outcome.ok === false && outcome.error.class).toBe("captcha");
    }
  });

  it("treats a bare HTTP 202 as rate limiting", () => {
    const outcome = duckduckgo.parseResponse(answer("", 202), query());
    expect(outcome.ok === false && outcome.error.class).toBe("rate_limited");
  });

  it("accepts the explicit no-results notice as an empty answer", () => {
    expect(duckduckgo.parseResponse(answer(fixture("duckduckgo/html_no_results_synthetic.html")), query())).toEqual({ ok: true, results: [] });
  });

  it("turns malformed bodies into parse errors, never a throw", () => {
    for (const body of ["", "<html><body class='body--html'><p>maintenance</p></body></html>", "\u0000\u0001{]", "<div class=result><a class=result__a>no href</a></div>"]) {
      const outcome = duckduckgo.parseResponse(answer(body), query());
      expect(outcome.ok === false && outcome.error.class).toBe("parse");
    }
  });

  it("classifies HTTP failures", () => {
    const limited = duckduckgo.parseResponse(answer("slow down", 429, { "retry-after": "30" }), query());
    expect(limited).toEqual({ ok: false, error: { class: "rate_limited", message: expect.any(String), retryAfterSeconds: 30 } });
    const down = duckduckgo.parseResponse(answer("oops", 503), query());
    expect(down.ok === false && down.error.class).toBe("http");
    const refused = duckduckgo.parseResponse(answer("no", 403), query());
    expect(refused.ok === false && refused.error.class).toBe("blocked");
  });
});

describe("unwrapDdgLink", () => {
  it("handles relative, protocol-relative and direct links", () => {
    expect(unwrapDdgLink("/l/?kh=-1&uddg=https%3A%2F%2Fexample.com%2Fa%3Fb%3D1")).toBe("https://example.com/a?b=1");
    expect(unwrapDdgLink("//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2F&rut=abc")).toBe("https://example.org/");
    expect(unwrapDdgLink("https://example.net/direct")).toBe("https://example.net/direct");
    expect(unwrapDdgLink("/l/?kh=-1")).toBeNull();
    expect(unwrapDdgLink("javascript:alert(1)")).toBeNull();
    expect(unwrapDdgLink("/l/?uddg=javascript%3Aalert(1)")).toBeNull();
  });
});

describe("duckduckgo.buildRequest", () => {
  it("posts the search form to /html/", async () => {
    const req = duckduckgo.buildRequest(query({ query: "exit vim", freshness: "week", language: "en-GB" }), cfg);
    expect(req.method).toBe("POST");
    expect(req.url).toBe("https://html.duckduckgo.com/html/");
    const form = new URLSearchParams(await req.text());
    expect(Object.fromEntries(form)).toEqual({ q: "exit vim", kl: "uk-en", df: "w" });
    expect(req.headers.get("content-type")).toMatch(/^application\/x-www-form-urlencoded/);
  });

  it("searches as from a country with DDG's own region code, in the query's language where the region has it", async () => {
    const kl = async (q: Parameters<typeof query>[0]) => new URLSearchParams(await duckduckgo.buildRequest(query(q), cfg).text()).get("kl");
    expect(await kl({ country: "DE" })).toBe("de-de");
    expect(await kl({ country: "GB" })).toBe("uk-en");
    expect(await kl({ country: "CA", language: "fr" })).toBe("ca-fr");
    expect(await kl({ country: "CH", language: "it" })).toBe("ch-it");
  });

  it("asks for later pages by offset", async () => {
    const form = new URLSearchParams(await duckduckgo.buildRequest(query({ page: 3 }), cfg).text());
    expect(form.get("s")).toBe("60");
    expect(form.get("dc")).toBe("61");
  });

  it("keeps the upstream path under a rebased base URL", () => {
    expect(duckduckgo.buildRequest(query(), { baseUrl: "http://127.0.0.1:8081/replay/ddg" }).url).toBe("http://127.0.0.1:8081/replay/ddg/html/");
  });

  it("maps languages to DDG regions", () => {
    expect(ddgRegion("en")).toBe("wt-wt");
    expect(ddgRegion("de")).toBe("de-de");
    expect(ddgRegion("de-AT")).toBe("at-de");
    expect(ddgRegion("en-US")).toBe("us-en");
  });
});
