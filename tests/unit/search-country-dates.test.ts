/** Search's pure parts for api.md §8: country names → ISO codes, and the date range filter and hints. */
import { describe, expect, it } from "vitest";
import { countryCode } from "../../core/operations/search/country.ts";
import { exactRange, filterByDate, windowFor } from "../../core/operations/search/dates.ts";

describe("countryCode", () => {
  it.each([
    ["united states", "US"], ["United States of America", "US"], ["usa", "US"], ["germany", "DE"], ["DE", "DE"], ["de", "DE"],
    ["united kingdom", "GB"], ["uk", "GB"], ["UK", "GB"], ["czech republic", "CZ"], ["czechia", "CZ"], ["turkey", "TR"], ["Türkiye", "TR"],
    ["côte d'ivoire", "CI"], ["ivory coast", "CI"], ["south korea", "KR"], ["north korea", "KP"], ["myanmar", "MM"], ["BU", "MM"],
    ["bosnia and herzegovina", "BA"], ["trinidad & tobago", "TT"], ["hong kong", "HK"], ["kosovo", "XK"], ["new zealand", "NZ"],
  ])("%s → %s", (name, code) => {
    expect(countryCode(name)).toBe(code);
  });

  it("knows no country by a grouping, a private-use code or a made-up name", () => {
    for (const name of ["eu", "European Union", "united nations", "ZZ", "QO", "XA", "narnia", "atlantis"]) expect(countryCode(name), name).toBeNull();
  });
});

describe("filterByDate", () => {
  const r = (published_at: string | null) => ({ published_at });
  const results = [r("2024-01-01T00:00:00Z"), r("2023-12-31T23:59:59Z"), r("2024-03-31T23:59:59.999Z"), r("2024-04-01T00:00:00Z"), r(null), r("not a date")];

  it("keeps both ends of the range whole days (UTC), drops and counts the rest, and undated ones unless asked", () => {
    const dropped = filterByDate(results, { start_date: "2024-01-01", end_date: "2024-03-31" }, "drop");
    expect(dropped.kept.map((x) => x.published_at)).toEqual(["2024-01-01T00:00:00Z", "2024-03-31T23:59:59.999Z"]);
    expect([dropped.outOfRange, dropped.undated]).toEqual([2, 2]);
    const kept = filterByDate(results, { start_date: "2024-01-01", end_date: "2024-03-31" }, "keep");
    expect(kept.kept.map((x) => x.published_at)).toEqual(["2024-01-01T00:00:00Z", "2024-03-31T23:59:59.999Z", null, "not a date"]);
    expect([kept.outOfRange, kept.undated]).toEqual([2, 2]);
  });

  it("an open end is unbounded", () => {
    expect(filterByDate(results, { start_date: "2024-02-01", end_date: null }, "drop").kept).toHaveLength(2);
    expect(filterByDate(results, { start_date: null, end_date: "2023-12-31" }, "drop").kept).toEqual([r("2023-12-31T23:59:59Z")]);
  });
});

describe("date hints for the engines", () => {
  const now = Date.parse("2026-03-10T12:00:00Z");
  it("windowFor picks the narrowest window reaching back to start_date, none past a year", () => {
    expect(windowFor({ start_date: "2026-03-10", end_date: null }, now)).toBe("day");
    expect(windowFor({ start_date: "2026-03-05", end_date: null }, now)).toBe("week");
    expect(windowFor({ start_date: "2026-02-10", end_date: null }, now)).toBe("month");
    expect(windowFor({ start_date: "2025-06-01", end_date: null }, now)).toBe("year");
    expect(windowFor({ start_date: "2024-06-01", end_date: null }, now)).toBeNull();
    expect(windowFor({ start_date: null, end_date: "2026-01-01" }, now)).toBeNull();
  });
  it("exactRange fills an open end with today or a date before any index", () => {
    expect(exactRange({ start_date: "2025-01-01", end_date: null }, now)).toEqual({ from: "2025-01-01", to: "2026-03-10" });
    expect(exactRange({ start_date: null, end_date: "2025-01-01" }, now)).toEqual({ from: "1990-01-01", to: "2025-01-01" });
  });
});
