import { describe, expect, it } from "vitest";
import { buildAnswersRequest, parseAnswers, stackexchange } from "../../core/backends/social/stackexchange.ts";
import { answer, fixture, query } from "../backends/helpers.ts";

const recorded = fixture("stackexchange/questions_tagged_html_2016.json");
const cfg = { baseUrl: "https://api.stackexchange.com" };

describe("stackexchange.parseResponse", () => {
  it("parses the recorded question list (same wrapper as /search/advanced)", () => {
    const out = stackexchange.parseResponse(answer(recorded), query());
    expect(out.ok && out.results).toHaveLength(30);
    expect(out.ok && out.results[0]).toEqual({
      id: "se:40332332",
      platform: "stackexchange",
      kind: "question",
      title: "CSS - off canvas issue",
      snippet: "CSS - off canvas issue",
      text: "",
      url: "http://stackoverflow.com/questions/40332332/css-off-canvas-issue",
      linked_url: null,
      author: "Leff",
      community: "javascript",
      published_at: "2016-10-30T18:41:10Z",
      engagement: { score: 2, answers: 0, views: 20 },
    });
    const titles = out.ok ? out.results.map((r) => r.title) : [];
    expect(titles).toContain("How to detect DIV's dimension changed?"); // HTML-escaped upstream
    expect(titles).toContain("link <a> tag downloading the default html page when condition is not fulfilled");
    expect(out.ok && out.results.find((r) => r.engagement.score! < 0)).toBeTruthy(); // down-voted questions keep their score
  });

  it("keeps the body as paragraphs when filter=withbody gives one", () => {
    const body = JSON.stringify({
      items: [{ question_id: 1, title: "Q &amp; A", link: "https://superuser.com/questions/1/q", body: "<p>First.</p>\n<p>Second &lt;b&gt;</p>", tags: ["x"], creation_date: 1700000000 }],
      quota_remaining: 299,
    });
    const out = stackexchange.parseResponse(answer(body), query());
    expect(out.ok && out.results[0]).toMatchObject({ id: "se:superuser.com:1", title: "Q & A", text: "First.\nSecond <b>", community: "x" });
  });

  it("answers a backoff as rate_limited with its seconds", () => {
    const withBackoff = JSON.stringify({ ...JSON.parse(recorded), backoff: 10 });
    const out = stackexchange.parseResponse(answer(withBackoff), query());
    expect(out.ok === false && out.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 10, message: expect.stringContaining("quota_remaining 9995") });
  });

  it("reads throttle_violation and other error bodies", () => {
    const throttle = '{"error_id":502,"error_message":"too many requests from this IP, more requests available in 80802 seconds","error_name":"throttle_violation"}';
    const t = stackexchange.parseResponse(answer(throttle, 400), query());
    expect(t.ok === false && t.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 80802 });
    const bad = stackexchange.parseResponse(answer('{"error_id":400,"error_message":"site is required","error_name":"bad_parameter"}', 400), query());
    expect(bad.ok === false && bad.error).toMatchObject({ class: "http", message: expect.stringContaining("bad_parameter") });
    const denied = stackexchange.parseResponse(answer('{"error_id":403,"error_message":"no","error_name":"access_denied"}', 403), query());
    expect(denied.ok === false && denied.error.class).toBe("blocked");
    const html = stackexchange.parseResponse(answer("<html>503</html>", 503), query());
    expect(html.ok === false && html.error.class).toBe("http");
    const junk = stackexchange.parseResponse(answer("[1]"), query());
    expect(junk.ok === false && junk.error.class).toBe("parse");
  });
});

describe("stackexchange.buildRequest", () => {
  it("asks /2.3/search/advanced on Stack Overflow with bodies, the key only when configured", () => {
    const url = new URL(stackexchange.buildRequest(query({ query: "flexbox gap", maxResults: 20 }), cfg).url);
    expect(url.origin + url.pathname).toBe("https://api.stackexchange.com/2.3/search/advanced");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      q: "flexbox gap", site: "stackoverflow", order: "desc", sort: "relevance", pagesize: "20", filter: "withbody",
    });
    const keyed = new URL(stackexchange.buildRequest(query({ freshness: "day" }), { ...cfg, key: "k((" }).url);
    expect(keyed.searchParams.get("key")).toBe("k((");
    expect(keyed.searchParams.get("sort")).toBe("creation");
  });

  it("takes the site from the base URL and keeps the upstream path under a rebased base", () => {
    const url = new URL(stackexchange.buildRequest(query(), { baseUrl: "http://127.0.0.1:9000/se?site=superuser" }).url);
    expect(url.origin + url.pathname).toBe("http://127.0.0.1:9000/se/2.3/search/advanced");
    expect(url.searchParams.get("site")).toBe("superuser");
  });
});

describe("stackexchange answers", () => {
  it("asks for several questions' answers in one call and groups them, accepted first", () => {
    const url = new URL(buildAnswersRequest([11, 22], cfg).url);
    expect(url.pathname).toBe("/2.3/questions/11;22/answers");
    expect(url.searchParams.get("sort")).toBe("votes");
    // SYNTHETIC body from the documented answer type (https://api.stackexchange.com/docs/types/answer).
    const body = JSON.stringify({
      items: [
        { answer_id: 101, question_id: 11, score: 50, is_accepted: false, body: "<p>Use gap.</p>", owner: { display_name: "A" } },
        { answer_id: 102, question_id: 11, score: 3, is_accepted: true, body: "<p>Accepted one.</p>", owner: { display_name: "B" } },
        { answer_id: 201, question_id: 22, score: 1, body: "<p>Other.</p>" },
        { answer_id: 301, question_id: 99, score: 9, body: "<p>Not asked.</p>" },
      ],
      quota_remaining: 100,
    });
    const urls = new Map([[11, "https://stackoverflow.com/questions/11/q"], [22, "https://stackoverflow.com/questions/22/r"]]);
    const byQuestion = parseAnswers(answer(body), urls)!;
    expect(byQuestion.get(11)!.map((a) => a.id)).toEqual(["se:102", "se:101"]);
    expect(byQuestion.get(11)![0]).toEqual({ id: "se:102", author: "B", text: "Accepted one.", score: 3, url: "https://stackoverflow.com/questions/11/q#102" });
    expect(byQuestion.get(22)).toHaveLength(1);
    expect(byQuestion.has(99)).toBe(false);
    expect(parseAnswers(answer('{"backoff":5,"items":[]}'), urls)).toBeNull();
  });
});
