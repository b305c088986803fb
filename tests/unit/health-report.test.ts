import { describe, expect, it } from "vitest";
import type { BackendHealth } from "../../core/backends/runner.ts";
import { reportValues, sameValues } from "../../core/routes/health-report.ts";

type Report = Record<string, BackendHealth>;
const base = (): Report => ({
  searxng: { status: "disabled", success_rate: 0, calls: 0 },
  duckduckgo: { status: "ok", success_rate: 0.75, calls: 4 },
  wikipedia: { status: "unknown", success_rate: 0, calls: 0 },
});

describe("/health's backends report: kept while its JSON would be the same", () => {
  it("is the same exactly when JSON.stringify writes the same text", () => {
    const values = reportValues(base())!;
    expect(sameValues(values, base())).toBe(true);
    const variants: Array<(r: Report) => void> = [
      (r) => (r.duckduckgo!.calls = 5),
      (r) => (r.duckduckgo!.success_rate = 0.8),
      (r) => (r.wikipedia!.status = "failing"),
      (r) => delete r.wikipedia,
      (r) => (r.brave = { status: "disabled", success_rate: 0, calls: 0 }),
      (r) => delete (r.duckduckgo as Partial<BackendHealth>).calls,
      (r) => ((r.duckduckgo as unknown as Record<string, unknown>).extra = 1),
      (r) => ((r.duckduckgo as unknown as Record<string, unknown>).calls = "4"),
      (r) => (r.duckduckgo!.success_rate = Number.NaN),
      // the same members in another order
      (r) => {
        const d = r.duckduckgo!;
        delete r.duckduckgo;
        r.duckduckgo = d;
      },
      (r) => (r.searxng = { calls: 0, status: "disabled", success_rate: 0 } as BackendHealth),
    ];
    for (const change of variants) {
      const r = base();
      change(r);
      expect(sameValues(values, r)).toBe(JSON.stringify(r) === JSON.stringify(base()));
      expect(sameValues(values, r)).toBe(false);
    }
    expect(sameValues(values, {})).toBe(false);
    expect(sameValues(reportValues({})!, {})).toBe(true);
  });

  it("keeps nothing for a report with a value that is neither a string nor a number", () => {
    const r = base() as unknown as Record<string, Record<string, unknown>>;
    r.duckduckgo!.detail = { nested: true };
    expect(reportValues(r as unknown as Report)).toBeNull();
  });

  it("sees a report changed in place after it was read", () => {
    const r = base();
    const values = reportValues(r)!;
    r.duckduckgo!.calls = 9;
    expect(sameValues(values, r)).toBe(false);
  });
});
