/**
 * The usage view's "Requests per day" chart (#16), appended to app.js (it uses that script's
 * helpers: $, h, svg, num). No chart framework: one inline SVG of stacked bars, drawn from
 * GET /v1/usage/daily, by key (the account's keys the signed-in key may manage, side by side)
 * or by operation group (the signed-in key). The SVG is an image with a one-sentence summary
 * for screen readers; the same figures are in a real table under it, and each bar has a
 * tooltip. Colours come from a palette that stays distinguishable for common colour-vision
 * deficiencies, and every series is named in the legend and the table, never by colour alone.
 * (Kept free of backticks and dollar-brace so it can sit in this template string.)
 */
export const DAILY_CHART_JS = String.raw`
// ---- usage per day ----
const daily = {
  chart: $("daily-chart"), summary: $("daily-summary"), legend: $("daily-legend"),
  table: $("daily-table"), modes: $("daily-modes"), data: null,
};
const PALETTE_SIZE = 8;
const dayFmt = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", timeZone: "UTC" });
const dayName = (iso) => dayFmt.format(new Date(iso + "T00:00:00Z"));

function dailyMode() {
  const pressed = daily.modes.querySelector("[aria-pressed=true]");
  return pressed && pressed.dataset.mode === "groups" ? "groups" : "keys";
}

/** The series of the chosen mode; past the palette, the smallest keys are summed into one. */
function dailySeries(d, mode) {
  if (mode === "groups") {
    return d.groups.map((g) => ({ name: g, values: d.key.daily.map((x) => x.groups[g] || 0) }));
  }
  const all = d.keys.map((k) => ({
    name: k.name + " (" + k.prefix + ")" + (k.id === d.key.id ? ", signed in" : "") + (k.revoked_at ? ", revoked" : ""),
    values: k.daily.map((x) => x.used), total: k.used,
  }));
  if (all.length <= PALETTE_SIZE) return all;
  all.sort((a, b) => b.total - a.total);
  const kept = all.slice(0, PALETTE_SIZE - 1);
  const rest = all.slice(PALETTE_SIZE - 1);
  kept.push({ name: rest.length + " other keys", values: d.days.map((_, i) => rest.reduce((s, k) => s + k.values[i], 0)) });
  return kept;
}

/** A round top for the axis: 1, 2 or 5 times a power of ten. */
function niceMax(n) {
  if (n <= 4) return 4;
  const p = Math.pow(10, Math.floor(Math.log10(n)));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

function renderDaily() {
  const d = daily.data;
  if (!d) return;
  const byKeys = Array.isArray(d.keys);
  daily.modes.hidden = !byKeys;
  const mode = byKeys ? dailyMode() : "groups";
  const series = dailySeries(d, mode);
  const totals = d.days.map((_, i) => series.reduce((s, x) => s + x.values[i], 0));
  const sum = totals.reduce((a, b) => a + b, 0);
  const top = Math.max(...totals);
  const busiest = totals.indexOf(top);
  const who = mode === "groups" ? "this key" : (series.length === 1 ? "your key" : "your " + d.keys.length + " keys");
  const range = dayName(d.days[0]) + (d.days.length > 1 ? " to " + dayName(d.days[d.days.length - 1]) : "");
  const sentence = sum === 0
    ? "No requests counted for " + who + " from " + range + "."
    : num(sum) + " requests counted for " + who + " from " + range + "; the busiest day was " + dayName(d.days[busiest]) + " with " + num(top) + ".";
  daily.summary.textContent = sentence;

  // The drawing: 720 x 240 user units, scaled to the card's width.
  const W = 720, H = 240, left = 44, right = 8, topPad = 10, bottom = 26;
  const plotW = W - left - right, plotH = H - topPad - bottom;
  const max = niceMax(top);
  const step = plotW / d.days.length;
  const barW = Math.max(2, step * 0.72);
  const y = (v) => topPad + plotH - (v / max) * plotH;
  const kids = [];
  for (const v of [0, max / 2, max]) {
    kids.push(svg("line", { class: "grid", x1: left, x2: W - right, y1: y(v), y2: y(v) }));
    kids.push(svg("text", { class: "axis", x: left - 6, y: y(v) + 4, "text-anchor": "end" }, document.createTextNode(num(v))));
  }
  const every = d.days.length > 16 ? 5 : d.days.length > 8 ? 2 : 1;
  d.days.forEach((day, i) => {
    const x = left + i * step + (step - barW) / 2;
    let base = 0;
    const parts = [];
    const detail = series.filter((s) => s.values[i] > 0).map((s) => s.name + " " + num(s.values[i]));
    parts.push(svg("title", {}, document.createTextNode(dayName(day) + ": " + num(totals[i]) + (detail.length ? " (" + detail.join(", ") + ")" : ""))));
    series.forEach((s, j) => {
      const v = s.values[i];
      if (!v) return;
      parts.push(svg("rect", { class: "s" + (j % PALETTE_SIZE), x: x.toFixed(2), width: barW.toFixed(2), y: y(base + v).toFixed(2), height: (y(base) - y(base + v)).toFixed(2) }));
      base += v;
    });
    // A transparent column so the tooltip shows over empty days too.
    parts.push(svg("rect", { class: "hit", x: (left + i * step).toFixed(2), width: step.toFixed(2), y: topPad, height: plotH }));
    kids.push(svg("g", { class: "day", "data-date": day }, ...parts));
    if ((i + 1) % every === 0 || i === 0) {
      kids.push(svg("text", { class: "axis", x: (left + i * step + step / 2).toFixed(2), y: H - 8, "text-anchor": "middle" }, document.createTextNode(String(Number(day.slice(8))))));
    }
  });
  daily.chart.replaceChildren(svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "Chart: " + sentence, class: "chart" }, ...kids));

  daily.legend.replaceChildren(...series.map((s, j) => h("li", {},
    h("span", { class: "swatch s" + (j % PALETTE_SIZE), "aria-hidden": "true" }),
    h("span", { class: "legend-name", text: s.name }),
    h("span", { class: "muted", text: " " + num(s.values.reduce((a, b) => a + b, 0)) }))));

  const caption = "Requests per day " + (mode === "groups" ? "by operation group, for the key you signed in with" : "for each key");
  daily.table.replaceChildren(
    h("caption", { class: "sr-only", text: caption }),
    h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "Day" }), series.map((s) => h("th", { scope: "col", text: s.name })), h("th", { scope: "col", text: "Total" }))),
    h("tbody", {}, d.days.map((day, i) => h("tr", {},
      h("th", { scope: "row" }, h("time", { datetime: day, text: dayName(day) })),
      series.map((s) => h("td", { text: num(s.values[i]) })),
      h("td", { text: num(totals[i]) })))),
    h("tfoot", {}, h("tr", {}, h("th", { scope: "row", text: "Month so far" }),
      series.map((s) => h("td", { text: num(s.values.reduce((a, b) => a + b, 0)) })), h("td", { text: num(sum) }))),
  );
}
for (const b of daily.modes.querySelectorAll("button")) {
  b.addEventListener("click", () => {
    for (const other of daily.modes.querySelectorAll("button")) other.setAttribute("aria-pressed", String(other === b));
    renderDaily();
  });
}
`;
