/** The dashboard's stylesheet, served as /dashboard/app.css (the CSP allows no inline styles). */
export const DASHBOARD_CSS = String.raw`:root {
  color-scheme: light dark;
  --bg: #f5f6f8; --fg: #15181e; --muted: #4f5765; --card: #fff; --line: #d3d8e0;
  --accent: #1d5bd0; --accent-fg: #fff; --danger: #b3261e; --danger-fg: #fff;
  --good: #136b2d; --good-bg: #e5f4e9; --warn: #7f4b00; --warn-bg: #fff3dc; --bad: #b3261e; --bad-bg: #fdeceb;
  --chip: #eaeff7; --focus: #1d5bd0; --track: #e3e7ee; --radius: 8px;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #101318; --fg: #e7eaf0; --muted: #a8b0bd; --card: #191d24; --line: #343b47;
    --accent: #8ab4ff; --accent-fg: #0b1220; --danger: #ff8f86; --danger-fg: #1d0503;
    --good: #7ddc95; --good-bg: #12301c; --warn: #ffc46b; --warn-bg: #3a2a0c; --bad: #ff8f86; --bad-bg: #3b1513;
    --chip: #252b36; --focus: #8ab4ff; --track: #2a303b;
  }
}
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); }
h1, h2 { line-height: 1.25; margin: 0 0 .5rem; }
h1 { font-size: 1.6rem; }
h2 { font-size: 1.1rem; }
p { margin: 0 0 .75rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; overflow-wrap: anywhere; }
a { color: var(--accent); }
[hidden] { display: none !important; }
.muted { color: var(--muted); }
.hint { color: var(--muted); font-size: .9rem; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
h1:focus { outline: none; }
h1:focus-visible { outline: 3px solid var(--focus); }

.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; padding: .75rem max(1rem, calc((100% - 68rem) / 2));
  background: var(--card); border-bottom: 1px solid var(--line); }
.brand { margin: 0; font-weight: 700; font-size: 1.15rem; display: flex; align-items: center; gap: .5rem; }
.brand .muted { font-weight: 400; }
.logo { width: 1.1rem; height: 1.1rem; background: var(--accent); border-radius: 3px; transform: rotate(45deg) scale(.8); }
nav ul { display: flex; gap: .25rem; list-style: none; margin: 0; padding: 0; }
nav a { display: block; padding: .4rem .75rem; border-radius: var(--radius); text-decoration: none; color: var(--fg); font-weight: 500; }
nav a:hover { background: var(--chip); }
nav a[aria-current="page"] { background: var(--accent); color: var(--accent-fg); }
.who { margin-left: auto; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; font-size: .9rem; }

main { max-width: 68rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; }
.view.narrow { max-width: 34rem; }
.view-head { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between; gap: .5rem 1rem; margin-bottom: .5rem; }
.view-head p { margin: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); padding: 1rem 1.25rem; margin: 1rem 0; }

.msg { padding: .75rem 1rem; border-radius: var(--radius); border: 1px solid; margin: 0 0 1rem; font-weight: 500; }
.msg:empty { display: none; }
.msg-error { color: var(--bad); background: var(--bad-bg); border-color: currentColor; }
.msg-ok { color: var(--good); background: var(--good-bg); border-color: currentColor; }
.warn { color: var(--warn); background: var(--warn-bg); padding: .75rem 1rem; border-radius: var(--radius); border-left: 4px solid currentColor; }

label { display: block; font-weight: 600; margin: .25rem 0; }
input[type=text], input[type=password] { width: 100%; font: inherit; padding: .55rem .7rem; color: var(--fg); background: var(--bg);
  border: 1px solid var(--muted); border-radius: 6px; }
input[aria-invalid="true"] { border-color: var(--bad); box-shadow: 0 0 0 1px var(--bad); }
fieldset { border: 1px solid var(--line); border-radius: var(--radius); margin: .5rem 0 1rem; padding: .5rem 1rem .75rem; }
legend { font-weight: 600; padding: 0 .25rem; }
.checks { display: grid; gap: .25rem; }
.check { display: flex; align-items: flex-start; gap: .6rem; font-weight: 400; margin: 0; padding: .35rem 0; cursor: pointer; }
.check input { width: 1.15rem; height: 1.15rem; margin: .2rem 0 0; accent-color: var(--accent); flex: none; }

button { font: inherit; font-weight: 600; padding: .5rem 1rem; min-height: 2.5rem; border-radius: 6px; cursor: pointer;
  border: 1px solid var(--muted); background: var(--card); color: var(--fg); }
button:hover { background: var(--chip); }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
button.danger { background: var(--danger); border-color: var(--danger); color: var(--danger-fg); }
button.primary:hover, button.danger:hover { filter: brightness(1.1); }
button.small { padding: .25rem .75rem; min-height: 2.25rem; font-size: .9rem; }
button:disabled { opacity: .6; cursor: progress; }

.table-wrap { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .6rem .8rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
thead th { font-size: .85rem; color: var(--muted); font-weight: 600; white-space: nowrap; }
tbody tr:last-child > * { border-bottom: 0; }
td.act { text-align: right; }
.keys .name { font-weight: 600; overflow-wrap: anywhere; }
.keys td:first-child { min-width: 11rem; }
.keys .chips { min-width: 8rem; }
.keys code { white-space: nowrap; }
.tag { display: inline-block; margin-left: .5rem; font-size: .75rem; padding: 0 .45rem; border-radius: 999px; border: 1px solid var(--accent); color: var(--accent); font-weight: 600; }
.chips { display: flex; flex-wrap: wrap; gap: .25rem; list-style: none; margin: 0; padding: 0; }
.chips li { background: var(--chip); border-radius: 999px; padding: 0 .55rem; font-size: .85rem; }
time { white-space: nowrap; }

.stats { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: .75rem; margin: 1rem 0; }
.stat { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); padding: .75rem 1rem; }
.stat dt { color: var(--muted); font-size: .85rem; }
.stat dd { margin: 0; font-size: 1.35rem; font-weight: 650; }
.stat dd small { display: block; font-size: .85rem; font-weight: 400; color: var(--muted); }
svg.bar { display: block; width: 100%; height: .8rem; }
svg.bar .track { fill: var(--track); }
svg.bar .fill { fill: var(--accent); }
.meter.high svg.bar .fill { fill: var(--bad); }
.meter-label { font-weight: 500; }
.bars { list-style: none; margin: 0; padding: 0; display: grid; gap: .6rem; }
.bars li { display: grid; grid-template-columns: 6rem 4rem 1fr; align-items: center; gap: .75rem; }
.bar-name { font-weight: 600; }
.bar-count { text-align: right; font-variant-numeric: tabular-nums; }
.chart-head { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between; gap: .25rem 1rem; }
.modes { display: flex; flex-wrap: wrap; gap: .25rem; margin: 0 0 .5rem; }
.modes button[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
figure.daily { margin: 0; }
svg.chart { display: block; width: 100%; height: auto; }
svg.chart .grid { stroke: var(--line); stroke-width: 1; }
svg.chart .axis { fill: var(--muted); font-size: 11px; font-variant-numeric: tabular-nums; }
svg.chart .hit { fill: transparent; }
svg.chart g.day:hover .hit { fill: var(--chip); fill-opacity: .5; }
#daily-summary { margin: .5rem 0; font-weight: 500; }
.legend { list-style: none; margin: 0 0 .5rem; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; font-size: .9rem; }
.legend li { display: flex; align-items: center; gap: .4rem; overflow-wrap: anywhere; }
.swatch { width: .85rem; height: .85rem; border-radius: 2px; flex: none; }
.s0 { --c: #0072b2; } .s1 { --c: #e69f00; } .s2 { --c: #009e73; } .s3 { --c: #cc79a7; }
.s4 { --c: #56b4e9; } .s5 { --c: #d55e00; } .s6 { --c: #8a7d00; } .s7 { --c: #7f7f7f; }
.swatch { background: var(--c); }
svg.chart rect[class^="s"] { fill: var(--c); }
.daily-data summary { cursor: pointer; font-weight: 600; margin: .25rem 0 .5rem; }
.daily-table td { text-align: right; font-variant-numeric: tabular-nums; }
.daily-table th[scope=col] { white-space: normal; }
.daily-table tfoot > tr > * { border-top: 2px solid var(--line); font-weight: 650; }

.banner { display: flex; align-items: center; gap: .6rem; padding: .9rem 1.1rem; border-radius: var(--radius); font-size: 1.1rem; border: 1px solid currentColor; }
.banner:empty { display: none; }
.banner .dot { width: .85rem; height: .85rem; border-radius: 50%; background: currentColor; flex: none; }
.banner-good { color: var(--good); background: var(--good-bg); }
.banner-warn { color: var(--warn); background: var(--warn-bg); }
.banner-bad { color: var(--bad); background: var(--bad-bg); }
.services { list-style: none; padding: 0; margin: 1rem 0; display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: .75rem; }
.service { margin: 0; }
.service h2 { text-transform: capitalize; }
.service p { margin: .4rem 0 0; font-size: .9rem; overflow-wrap: anywhere; }
.badge { display: inline-block; white-space: nowrap; font-weight: 600; font-size: .85rem; padding: .05rem .6rem; border-radius: 999px; }
.badge.good { color: var(--good); background: var(--good-bg); }
.badge.bad { color: var(--bad); background: var(--bad-bg); }
.badge.off { color: var(--muted); background: var(--chip); }
table.plain th[scope=row] { font-weight: 600; }
table.plain .num { text-align: right; font-variant-numeric: tabular-nums; }

dialog { width: min(36rem, calc(100% - 2rem)); border: 1px solid var(--line); border-radius: 12px; padding: 1.25rem 1.5rem;
  background: var(--card); color: var(--fg); box-shadow: 0 20px 60px rgba(0, 0, 0, .35); }
dialog::backdrop { background: rgba(10, 14, 22, .55); }
.secret-row { display: flex; gap: .5rem; }
.secret-row textarea { flex: 1; min-width: 0; font: .95rem/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; padding: .5rem .7rem;
  resize: none; word-break: break-all; color: var(--fg); background: var(--bg); border: 1px solid var(--muted); border-radius: 6px; }
.secret-row button { align-self: flex-start; }
.actions { display: flex; flex-wrap: wrap; justify-content: flex-end; gap: .5rem; margin-top: 1rem; }

@media (max-width: 40rem) {
  h1 { font-size: 1.35rem; }
  .who { margin-left: 0; }
  .table-wrap { overflow: visible; background: none; border: 0; }
  .daily-data .table-wrap, .table-wrap.collections { overflow-x: auto; }
  table.keys thead { display: none; }
  table.keys, table.keys tbody, table.keys tr, table.keys td { display: block; }
  table.keys tr { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); margin-bottom: .75rem; padding: .4rem .9rem; }
  table.keys td { display: grid; grid-template-columns: 6.5rem minmax(0, 1fr); gap: .5rem; padding: .35rem 0; border: 0; }
  table.keys td::before { content: attr(data-label); color: var(--muted); font-size: .85rem; font-weight: 600; }
  table.keys td.act { display: block; text-align: left; padding-top: .5rem; }
  .bars li { grid-template-columns: 5rem 3rem 1fr; gap: .5rem; }
  .stats { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .card { padding: .75rem .9rem; }
  table.plain th, table.plain td { padding: .5rem .4rem; }
  table.plain thead th { white-space: normal; }
  .stat dd { font-size: 1.15rem; }
  .keys td:first-child { min-width: 0; }
  .secret-row { flex-direction: column; }
  .secret-row textarea { min-height: 4.5rem; }
  dialog { padding: 1rem; }
}
@media (prefers-reduced-motion: no-preference) { button, nav a { transition: background-color .15s, filter .15s; } }
`;
