/**
 * The dashboard's static files, written here rather than built: /static/app.js draws the charts with uPlot
 * from `<script type="application/json">` blocks (the CSP allows no inline script), /static/app.css is the
 * whole style sheet. uPlot itself is served from node_modules/uplot/dist (index.ts).
 */

export const APP_JS = `"use strict";
(function () {
  var COLORS = ["#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bf3989"];
  function draw(el) {
    var src = document.getElementById(el.getAttribute("data-chart"));
    if (!src || typeof uPlot !== "function") return;
    var d = JSON.parse(src.textContent || "{}");
    var days = Array.isArray(d.days) ? d.days : [];
    var xs = days.map(function (day) { return Date.parse(day + "T12:00:00Z") / 1000; });
    var series = [{ label: "day", value: function (u, v) { return v == null ? "" : new Date(v * 1000).toISOString().slice(0, 10); } }];
    var data = [xs];
    (Array.isArray(d.series) ? d.series : []).forEach(function (s, i) {
      var scale = Math.pow(10, s.decimals);
      series.push({
        label: "net sales " + s.currency,
        stroke: COLORS[i % COLORS.length],
        width: 2,
        points: { show: true },
        value: function (u, v) { return v == null ? "" : v.toFixed(s.decimals) + " " + s.currency; },
      });
      data.push(s.net.map(function (n) { return n / scale; }));
    });
    if (data.length === 1) {
      series.push({ label: "no sales", stroke: "#8c959f", width: 1 });
      data.push(xs.map(function () { return 0; }));
    }
    var width = Math.max(320, Math.floor(el.getBoundingClientRect().width) || 800);
    new uPlot({ width: width, height: 260, series: series, scales: { x: { time: true } } }, data, el);
    el.setAttribute("data-drawn", "uplot");
  }
  function start() {
    var els = document.querySelectorAll("[data-chart]");
    for (var i = 0; i < els.length; i++) draw(els[i]);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
`;

export const APP_CSS = `:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #f6f8fa; --bad: #d1242f; --ok: #1a7f37; --warn: #9a6700; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: #fff; }
header { display: flex; align-items: center; gap: 1.5rem; padding: .6rem 1.2rem; background: var(--bg); border-bottom: 1px solid var(--line); }
header .brand { font-weight: 700; }
header nav a { margin-right: 1rem; color: var(--fg); text-decoration: none; }
header nav a.here { font-weight: 700; text-decoration: underline; }
header .who { margin-left: auto; color: var(--muted); }
header form { margin: 0; }
main { padding: 1rem 1.2rem 3rem; max-width: 1200px; }
h1 { font-size: 1.4rem; margin: .3rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; margin: .3rem 0 1rem; }
th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--bg); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.cards { display: flex; flex-wrap: wrap; gap: .8rem; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .6rem .9rem; min-width: 11rem; }
.card .big { font-size: 1.5rem; font-weight: 700; }
.muted { color: var(--muted); }
.online, .applied { color: var(--ok); font-weight: 600; }
.offline, .rolledBack, .revoked, .bad { color: var(--bad); font-weight: 600; }
.pending, .warn { color: var(--warn); font-weight: 600; }
.chart { min-height: 300px; width: 100%; max-width: 1000px; }
form.inline { display: inline; margin: 0 .3rem 0 0; }
form.filter { display: flex; gap: .8rem; align-items: end; flex-wrap: wrap; margin-bottom: 1rem; }
form.filter label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); }
input, select, button { font: inherit; padding: .25rem .5rem; }
button { cursor: pointer; }
.login { max-width: 22rem; margin: 4rem auto; border: 1px solid var(--line); border-radius: 8px; padding: 1.2rem 1.4rem; }
.login label { display: block; margin: .6rem 0; }
.login input { width: 100%; }
.error { color: var(--bad); }
pre { background: var(--bg); padding: .6rem; overflow-x: auto; }
`;

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f6feb"/><path d="M4 4h8v8H4z" fill="#fff"/></svg>`;
