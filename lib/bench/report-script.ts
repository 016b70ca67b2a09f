// Runs on: the browser that opens a report (the text below), written by main.
// Owns: the report page's interactive charts — time and bus bandwidth over
// size, one line per series, drawn as SVG from the page's embedded data, with a
// toggle between linear and log axes. Hand-written, no library and no network:
// the page must open from a file on a machine without either.
//
// The data (lib/bench/report.ts embeds it as JSON in #report-data):
//   { points: [{ series, bytes, timeUs, busbw }], series: [name...],
//     segments: [{ group, bar, part, ns }] }
// segments (lib/bench/sweep.ts timeSegments) are drawn as stacked bars of
// where the time goes, in #chart-parts, when the table has time_* columns.
// When every chart is drawn, <body> gets data-charts="N" (N = charts drawn), which
// the browser test reads.

/** The script, as the page's one inline <script>. */
export const REPORT_SCRIPT = String.raw`
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
  var W = 640, H = 340, M = { left: 70, right: 20, top: 16, bottom: 46 };

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  // A scale over [lo, hi] onto [a, b]; log scales take positive data only.
  function scale(lo, hi, a, b, log) {
    var f = log ? Math.log10 : function (v) { return v; };
    var l = f(lo), h = f(hi);
    if (h === l) { l -= 1; h += 1; }
    return function (v) { return a + ((f(v) - l) / (h - l)) * (b - a); };
  }

  // Ticks: powers of ten inside the domain on a log axis (and the ends when there are
  // fewer than two), about five round numbers on a linear one.
  function ticks(lo, hi, log) {
    var out = [], k;
    if (log) {
      for (k = Math.ceil(Math.log10(lo)); k <= Math.floor(Math.log10(hi)); k++) out.push(Math.pow(10, k));
      if (out.length < 2) out = [lo, hi];
      return out;
    }
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / 5 || 1)));
    while ((hi - lo) / step > 6) step *= 2;
    for (k = Math.ceil(lo / step) * step; k <= hi + step * 1e-9; k += step) out.push(k);
    return out;
  }

  // Decimal prefixes: on a log axis the ticks are powers of ten (1k, 10k, 1M).
  function label(v) {
    if (v === 0) return '0';
    var a = Math.abs(v);
    if (a >= 1e9) return +(v / 1e9).toPrecision(3) + 'G';
    if (a >= 1e6) return +(v / 1e6).toPrecision(3) + 'M';
    if (a >= 1e3) return +(v / 1e3).toPrecision(3) + 'k';
    return +v.toPrecision(3) + '';
  }

  function draw(svg, metric, yTitle, log) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var pts = data.points.filter(function (p) { return p[metric] > 0 || !log; });
    if (pts.length === 0) return false;
    var xs = pts.map(function (p) { return p.bytes; }), ys = pts.map(function (p) { return p[metric]; });
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    // The y domain is the data's (from 0 on a linear axis): no decade of empty plot above it.
    var y0 = log ? Math.min.apply(null, ys) : 0, y1 = Math.max.apply(null, ys);
    var sx = scale(x0, x1, M.left, W - M.right, log), sy = scale(y0, y1, H - M.bottom, M.top, log);
    var axes = el('g', { class: 'axes' }, svg);
    ticks(x0, x1, log).forEach(function (t) {
      el('line', { x1: sx(t), x2: sx(t), y1: M.top, y2: H - M.bottom, class: 'grid' }, axes);
      el('text', { x: sx(t), y: H - M.bottom + 16, 'text-anchor': 'middle' }, axes).textContent = label(t);
    });
    ticks(y0, y1, log).forEach(function (t) {
      el('line', { x1: M.left, x2: W - M.right, y1: sy(t), y2: sy(t), class: 'grid' }, axes);
      el('text', { x: M.left - 6, y: sy(t) + 4, 'text-anchor': 'end' }, axes).textContent = label(t);
    });
    el('text', { x: (M.left + W - M.right) / 2, y: H - 8, 'text-anchor': 'middle', class: 'title' }, axes).textContent = 'size (bytes per rank)';
    el('text', { x: 14, y: (M.top + H - M.bottom) / 2, 'text-anchor': 'middle', class: 'title', transform: 'rotate(-90 14 ' + (M.top + H - M.bottom) / 2 + ')' }, axes).textContent = yTitle;
    data.series.forEach(function (name, i) {
      var mine = pts.filter(function (p) { return p.series === name; }).sort(function (a, b) { return a.bytes - b.bytes; });
      if (mine.length === 0) return;
      var color = PALETTE[i % PALETTE.length];
      var d = mine.map(function (p, j) { return (j ? 'L' : 'M') + sx(p.bytes).toFixed(1) + ',' + sy(p[metric]).toFixed(1); }).join('');
      el('path', { d: d, class: 'series', stroke: color, 'data-series': name }, svg);
      mine.forEach(function (p) {
        var c = el('circle', { cx: sx(p.bytes), cy: sy(p[metric]), r: 3.5, fill: color }, svg);
        el('title', {}, c).textContent = name + ': ' + p.bytes + ' B, ' + yTitle + ' ' + (+p[metric].toPrecision(6));
      });
    });
    return true;
  }

  function legend(box, names) {
    names.forEach(function (name, i) {
      var item = document.createElement('span');
      item.className = 'key';
      var sw = document.createElement('i');
      sw.style.background = PALETTE[i % PALETTE.length];
      item.appendChild(sw);
      item.appendChild(document.createTextNode(name));
      box.appendChild(item);
    });
  }

  function uniq(xs) { return xs.filter(function (x, i) { return xs.indexOf(x) === i; }); }

  // Where the time goes: a stacked bar per (group, bar), groups side by side, a linear axis from 0.
  function drawParts(svg) {
    var segs = data.segments || [];
    if (!svg || segs.length === 0) return false;
    var parts = uniq(segs.map(function (s) { return s.part; }));
    var groups = uniq(segs.map(function (s) { return s.group; }));
    var bars = uniq(segs.map(function (s) { return s.group + '\u0000' + s.bar; }));
    var BW = 40, GAP = 18, bottom = 110;
    var width = Math.max(W, M.left + M.right + bars.length * BW + groups.length * GAP);
    svg.setAttribute('width', width);
    var total = {};
    segs.forEach(function (s) { var k = s.group + '\u0000' + s.bar; total[k] = (total[k] || 0) + s.ns; });
    var y1 = Math.max.apply(null, bars.map(function (k) { return total[k]; })) || 1;
    var sy = scale(0, y1, H - bottom, M.top, false);
    var axes = el('g', { class: 'axes' }, svg);
    ticks(0, y1, false).forEach(function (t) {
      el('line', { x1: M.left, x2: width - M.right, y1: sy(t), y2: sy(t), class: 'grid' }, axes);
      el('text', { x: M.left - 6, y: sy(t) + 4, 'text-anchor': 'end' }, axes).textContent = label(t);
    });
    el('text', { x: 14, y: (M.top + H - bottom) / 2, 'text-anchor': 'middle', class: 'title', transform: 'rotate(-90 14 ' + (M.top + H - bottom) / 2 + ')' }, axes).textContent = 'virtual ns (slowest rank)';
    var x = M.left + GAP / 2;
    groups.forEach(function (g) {
      var mine = bars.filter(function (k) { return k.split('\u0000')[0] === g; });
      mine.forEach(function (k) {
        var base = 0;
        var name = k.split('\u0000')[1];
        segs.filter(function (s) { return s.group + '\u0000' + s.bar === k; }).forEach(function (s) {
          var r = el('rect', { x: x, width: BW - 4, y: sy(base + s.ns), height: Math.max(0, sy(base) - sy(base + s.ns)), fill: PALETTE[parts.indexOf(s.part) % PALETTE.length], 'data-part': s.part }, svg);
          el('title', {}, r).textContent = g + ', ' + name + ': ' + s.part + ' ' + (+s.ns.toPrecision(6)) + ' ns';
          base += s.ns;
        });
        var lx = x + (BW - 4) / 2, ly = H - bottom + 10;
        el('text', { x: lx, y: ly, 'text-anchor': 'end', transform: 'rotate(-45 ' + lx + ' ' + ly + ')' }, axes).textContent = name;
        x += BW;
      });
      el('text', { x: x - (mine.length * BW) / 2 - 2, y: H - 8, 'text-anchor': 'middle', class: 'title' }, axes).textContent = g;
      x += GAP;
    });
    legend(document.getElementById('parts-legend'), parts);
    return true;
  }

  var charts = [
    { svg: document.getElementById('chart-time'), metric: 'timeUs', title: 'time (virtual us)' },
    { svg: document.getElementById('chart-busbw'), metric: 'busbw', title: 'busbw (GB/s)' },
  ];
  var toggle = document.getElementById('log-axes');
  function render() {
    var drawn = 0;
    charts.forEach(function (c) { if (draw(c.svg, c.metric, c.title, toggle.checked)) drawn++; });
    document.body.setAttribute('data-charts', String(drawn + parts));
  }
  Array.prototype.forEach.call(document.querySelectorAll('.legend.series'), function (box) { legend(box, data.series); });
  // The bars do not change with the log toggle: drawn once.
  var parts = drawParts(document.getElementById('chart-parts')) ? 1 : 0;
  toggle.addEventListener('change', render);
  render();
})();
`;
