/**
 * The fixed outcomes a recorded job page is counted under on /metrics (core/jobs/job-metrics.ts),
 * for the failures the engine records that the end-to-end test (tests/jobs/job-metrics.test.ts)
 * cannot easily provoke from a local site, and the order that decides between two that both apply.
 */
import { describe, expect, it } from "vitest";
import { PAGE_OUTCOMES, pageOutcome } from "../../core/jobs/job-metrics.ts";
import type { PageResult } from "../../core/ports/job-model.ts";

const failed = (statusCode: number, error: string): PageResult => ({ url: "http://x.test/a", ok: false, statusCode, title: null, data: {}, error });

describe("pageOutcome", () => {
  it("groups the engine's page errors into a fixed set", () => {
    expect(pageOutcome({ url: "http://x.test/", ok: true, statusCode: 200, title: "t", data: {}, error: null }, false)).toBe("ok");
    expect(pageOutcome(failed(404, "http_404"), false)).toBe("http_4xx");
    expect(pageOutcome(failed(429, "http_429"), false)).toBe("http_4xx");
    expect(pageOutcome(failed(503, "http_503"), false)).toBe("http_5xx");
    expect(pageOutcome(failed(200, "unsupported_content"), false)).toBe("unsupported");
    expect(pageOutcome(failed(0, "unsupported_content"), false)).toBe("unsupported"); // a body past the size limit
    expect(pageOutcome(failed(0, "robots_disallowed"), false)).toBe("robots");
    expect(pageOutcome(failed(0, "robots_unreachable"), false)).toBe("robots");
    expect(pageOutcome(failed(0, "host_unreachable"), true)).toBe("host_down");
    expect(pageOutcome(failed(0, "upstream_error"), true)).toBe("unreachable");
    expect(pageOutcome(failed(0, "url_not_allowed"), true)).toBe("unreachable"); // a name that does not resolve
    expect(pageOutcome(failed(0, "upstream_error"), false)).toBe("other"); // too many redirects
    expect(pageOutcome(failed(0, "url_not_allowed"), false)).toBe("other"); // a redirect to a private address
    expect(pageOutcome(failed(0, "render_failed"), false)).toBe("other");
    // A bot wall on every step (api.md §12): its own outcome, though it keeps the wall's status and counts toward the host's streak.
    expect(pageOutcome(failed(403, "blocked"), true)).toBe("blocked");
    expect(pageOutcome(failed(503, "blocked"), true)).toBe("blocked");
  });

  it("counts a timeout as a timeout even when it also says the host could not be reached", () => {
    expect(pageOutcome(failed(0, "timeout"), true)).toBe("timeout");
    expect(pageOutcome(failed(0, "timeout"), false)).toBe("timeout"); // a rendered page's wait that ran out
  });

  it("never answers outside its vocabulary", () => {
    for (const error of ["http_418", "weird", "", "timeout", "robots_x"]) for (const status of [0, 200, 302, 404, 599]) for (const u of [true, false]) {
      expect(PAGE_OUTCOMES).toContain(pageOutcome(failed(status, error), u));
    }
  });
});
