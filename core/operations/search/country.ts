/**
 * `country` as people and Tavily's clients write it ("united states", "Germany", "DE") → an
 * ISO 3166-1 alpha-2 code. English names come from the runtime's own CLDR data
 * (Intl.DisplayNames, on Node, Deno and Bun alike) plus the older names clients still send.
 */

/** Older or common English names CLDR spells differently. */
const ALIASES: Record<string, string> = {
  "usa": "US", "united states of america": "US", "america": "US", "uk": "GB", "great britain": "GB", "britain": "GB",
  "england": "GB", "czech republic": "CZ", "turkey": "TR", "myanmar": "MM", "burma": "MM", "ivory coast": "CI",
  "cote d ivoire": "CI", "democratic republic of the congo": "CD", "dr congo": "CD", "republic of the congo": "CG",
  "congo": "CG", "palestine": "PS", "korea": "KR", "republic of korea": "KR", "macedonia": "MK", "swaziland": "SZ",
  "vatican city": "VA", "vatican": "VA", "russian federation": "RU", "viet nam": "VN", "cape verde": "CV",
  "east timor": "TL", "holland": "NL", "the netherlands": "NL", "uae": "AE", "hong kong": "HK", "macau": "MO",
};

/** Region codes CLDR names that are not countries (groupings, private use, unknown). */
const NOT_COUNTRIES = new Set(["EU", "EZ", "UN", "ZZ", "AA", "QO", "QU"]);

/** Lower case, no accents, letters and single spaces only. */
export function normalizeName(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/&/g, " and ")
    .replace(/[^a-z]+/g, " ")
    .trim();
}

let byName: Map<string, string> | null = null;
/** Current codes, and retired ones (UK, BU, ZR, …) with the code that replaced them. */
let codes: Map<string, string> | null = null;

/** Retired codes CLDR still names, with the code that replaced them (not every runtime canonicalises them). */
const RETIRED: Record<string, string> = {
  UK: "GB", BU: "MM", TP: "TL", ZR: "CD", YU: "RS", CS: "RS", FX: "FR", DD: "DE", SU: "RU", AN: "CW",
  DY: "BJ", HV: "BF", NH: "VU", RH: "ZW", VD: "VN", YD: "YE",
};

/** `BU` → `MM`: the code that replaced a retired one, or the code itself. */
function canonical(code: string): string {
  if (RETIRED[code]) return RETIRED[code];
  try {
    return Intl.getCanonicalLocales(`und-${code}`)[0]!.split("-")[1] ?? code;
  } catch {
    return code;
  }
}

function tables(): { byName: Map<string, string>; codes: Map<string, string> } {
  if (!byName || !codes) {
    byName = new Map();
    codes = new Map();
    const names = new Intl.DisplayNames(["en"], { type: "region", fallback: "code" });
    const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    for (const a of letters) {
      for (const b of letters) {
        const code = a + b;
        if (NOT_COUNTRIES.has(code) || a === "Q" || (a === "X" && code !== "XK")) continue;
        let name: string | undefined;
        try {
          name = names.of(code);
        } catch {
          continue;
        }
        if (!name || name === code) continue;
        const current = canonical(code);
        codes.set(code, current);
        if (current !== code) continue;
        byName.set(normalizeName(name), code);
        // "Myanmar (Burma)", "Congo - Kinshasa": the part before the qualifier names it too, unless taken.
        const short = normalizeName(name.split(/\s+[-(]/)[0]!);
        if (!byName.has(short)) byName.set(short, code);
      }
    }
    for (const [alias, code] of Object.entries(ALIASES)) byName.set(alias, code);
  }
  return { byName, codes };
}

/** The ISO code for a name or code, or null when it names no country Quarry knows. */
export function countryCode(input: string): string | null {
  const { byName, codes } = tables();
  const raw = input.trim();
  const known = /^[A-Za-z]{2}$/.test(raw) ? codes.get(raw.toUpperCase()) : undefined;
  if (known) return known;
  return byName.get(normalizeName(raw)) ?? null;
}
