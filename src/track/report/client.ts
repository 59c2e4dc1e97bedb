/**
 * The report page's script, inlined into the HTML (no network, no library): draws each plot as
 * SVG from the JSON embedded in the page, with a legend that hides series on click and a cursor
 * that reads every series' value at the nearest step. When every plot has drawn, it sets
 * `data-plots-drawn` on <body> (the tests wait for it).
 */
export const CLIENT_SCRIPT = String.raw`
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var W = 460, H = 240, M = { l: 58, r: 12, t: 10, b: 30 };

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function niceTicks(lo, hi, count) {
    if (!(hi > lo)) { var d = Math.abs(lo) * 0.1 || 1; lo -= d; hi += d; }
    var raw = (hi - lo) / count, mag = Math.pow(10, Math.floor(Math.log10(raw))), step = mag;
    [1, 2, 2.5, 5, 10].some(function (m) { step = m * mag; return step >= raw; });
    // The axis runs from tick to tick, so that the lowest and highest values sit on labelled lines.
    lo = Math.floor(lo / step + 1e-9) * step;
    hi = Math.ceil(hi / step - 1e-9) * step;
    var ticks = [];
    for (var i = 0; lo + i * step <= hi + step * 1e-9; i++) { var v = lo + i * step; ticks.push(Math.abs(v) < step * 1e-9 ? 0 : Number(v.toPrecision(12))); }
    return { lo: lo, hi: hi, ticks: ticks };
  }

  function fmt(v) {
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
    return String(Number(v.toPrecision(4)));
  }

  function nearest(points, x) {
    var lo = 0, hi = points.length - 1;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (points[mid][0] < x) lo = mid + 1; else hi = mid; }
    if (lo > 0 && Math.abs(points[lo - 1][0] - x) <= Math.abs(points[lo][0] - x)) lo--;
    return points[lo];
  }

  function draw(plot) {
    var box = document.getElementById(plot.id);
    var xs = [], ys = [];
    plot.series.forEach(function (s) { s.points.forEach(function (p) { if (isFinite(p[0]) && isFinite(p[1])) { xs.push(p[0]); ys.push(p[1]); } }); });
    if (xs.length === 0) throw new Error("plot " + plot.title + " has no finite points");
    var X = niceTicks(Math.min.apply(null, xs), Math.max.apply(null, xs), 5);
    var Y = niceTicks(Math.min.apply(null, ys), Math.max.apply(null, ys), 4);
    var sx = function (x) { return M.l + (x - X.lo) / (X.hi - X.lo) * (W - M.l - M.r); };
    var sy = function (y) { return H - M.b - (y - Y.lo) / (Y.hi - Y.lo) * (H - M.t - M.b); };
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, class: "chart", role: "img", "aria-label": plot.title });
    Y.ticks.forEach(function (t) {
      el("line", { x1: M.l, x2: W - M.r, y1: sy(t), y2: sy(t), class: "grid" }, svg);
      el("text", { x: M.l - 6, y: sy(t) + 4, "text-anchor": "end" }, svg).textContent = fmt(t);
    });
    X.ticks.forEach(function (t) {
      el("line", { x1: sx(t), x2: sx(t), y1: H - M.b, y2: H - M.b + 4, class: "axis" }, svg);
      el("text", { x: sx(t), y: H - M.b + 16, "text-anchor": "middle" }, svg).textContent = fmt(t);
    });
    el("line", { x1: M.l, x2: W - M.r, y1: H - M.b, y2: H - M.b, class: "axis" }, svg);
    el("text", { x: W - M.r, y: H - 2, "text-anchor": "end", class: "xlabel" }, svg).textContent = plot.xLabel;
    var paths = plot.series.map(function (s) {
      var d = "";
      s.points.forEach(function (p, i) { d += (i ? "L" : "M") + sx(p[0]).toFixed(1) + " " + sy(p[1]).toFixed(1); });
      var path = el("path", { d: d, stroke: s.color, class: "line" }, svg);
      if (s.points.length === 1) el("circle", { cx: sx(s.points[0][0]), cy: sy(s.points[0][1]), r: 3, fill: s.color }, svg);
      return path;
    });
    var cursor = el("line", { y1: M.t, y2: H - M.b, class: "cursor", visibility: "hidden" }, svg);
    var tip = document.createElement("div");
    tip.className = "tip";
    box.appendChild(svg);
    box.appendChild(tip);
    var legend = document.createElement("div");
    legend.className = "legend";
    plot.series.forEach(function (s, i) {
      var item = document.createElement("span");
      item.innerHTML = '<i style="background:' + s.color + '"></i>';
      item.appendChild(document.createTextNode(s.label));
      item.onclick = function () {
        var off = item.classList.toggle("off");
        paths[i].style.display = off ? "none" : "";
      };
      legend.appendChild(item);
    });
    box.appendChild(legend);
    svg.addEventListener("mousemove", function (ev) {
      var r = svg.getBoundingClientRect();
      var x = X.lo + ((ev.clientX - r.left) * W / r.width - M.l) / (W - M.l - M.r) * (X.hi - X.lo);
      cursor.setAttribute("x1", sx(x)); cursor.setAttribute("x2", sx(x)); cursor.setAttribute("visibility", "visible");
      tip.textContent = plot.xLabel + " " + fmt(Math.round(x * 1000) / 1000) + ": " + plot.series.map(function (s) { var p = nearest(s.points, x); return s.label + " " + fmt(p[1]); }).join(" · ");
    });
    svg.addEventListener("mouseleave", function () { cursor.setAttribute("visibility", "hidden"); tip.textContent = ""; });
  }

  var drawn = 0;
  data.plots.forEach(function (plot) { draw(plot); drawn++; });
  document.body.setAttribute("data-plots-drawn", String(drawn));
})();
`;
