// charts.js draws each figure.ufig of a sixpin page with uPlot, from the
// JSON spec the figure carries (report/uchart.go writes it): hover gives
// every series' value at the cursor, dragging zooms to a span, alt+wheel
// zooms around the cursor, shift+wheel pans, a double click shows the
// whole again. A figure uPlot cannot draw keeps its SVG.
(function () {
  "use strict";
  // num formats as sixpin's text does: three significant figures,
  // thousands separated.
  function num(v) {
    if (v == null || !isFinite(v)) return "–";
    var a = Math.abs(v);
    if (a >= 1000) return Math.round(v).toLocaleString("en-US");
    if (a >= 100) return v.toFixed(0);
    if (a >= 10) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    if (a === 0) return "0";
    return String(Number(v.toPrecision(3)));
  }
  // The percentile axis: x = log10(1/(1−q)).
  function pct(x, digits) {
    var q = 100 * (1 - Math.pow(10, -x));
    return Number(q.toFixed(digits)) + "%";
  }
  function pctTick(x) { return pct(x, Math.max(0, Math.round(x) - 1)); }
  function pctHover(x) { return "p" + pct(x, Math.max(1, Math.ceil(x))).replace("%", ""); }

  function bandsPlugin(bands) {
    return { hooks: { drawClear: [function (u) {
      var ctx = u.ctx, bb = u.bbox;
      ctx.save();
      bands.forEach(function (b) {
        var l = Math.max(u.valToPos(b.from, "x", true), bb.left);
        var r = Math.min(u.valToPos(b.to, "x", true), bb.left + bb.width);
        if (r > l) {
          ctx.globalAlpha = 0.12;
          ctx.fillStyle = b.color;
          ctx.fillRect(l, bb.top, r - l, bb.height);
        }
      });
      ctx.restore();
    }] } };
  }

  // Alt+wheel zooms around the cursor, shift+wheel pans; a plain wheel
  // scrolls the page as ever.
  function wheelPlugin() {
    return { hooks: { ready: [function (u) {
      u.over.addEventListener("wheel", function (e) {
        if (!e.altKey && !e.shiftKey) return;
        e.preventDefault();
        var xs = u.data[0], lo = xs[0], hi = xs[xs.length - 1];
        var min = u.scales.x.min, max = u.scales.x.max, span = max - min;
        if (e.shiftKey) {
          var d = (e.deltaY || e.deltaX) > 0 ? span / 10 : -span / 10;
          var nmin = Math.min(Math.max(lo, min + d), hi - span);
          u.setScale("x", { min: nmin, max: nmin + span });
          return;
        }
        var f = e.deltaY < 0 ? 0.8 : 1.25, x = u.posToVal(e.offsetX, "x");
        u.setScale("x", { min: Math.max(lo, x - (x - min) * f), max: Math.min(hi, x + (max - x) * f) });
      }, { passive: false });
    }] } };
  }

  // axisSize makes room for an axis's widest tick label and its title.
  function axisSize(u, values) {
    var w = 0;
    (values || []).forEach(function (v) { w = Math.max(w, String(v).length); });
    return Math.max(40, 7 * w + 30);
  }

  function draw(fig) {
    var spec = JSON.parse(fig.querySelector("script.uspec").textContent);
    var el = fig.querySelector(".uchart");
    var avail = (fig.parentNode.clientWidth || spec.width) - 4;
    var pctX = spec.xKind === "percentile";
    var series = [{ label: spec.xLabel, value: function (u, v) { return v == null ? "–" : pctX ? pctHover(v) : spec.xKind === "seconds" ? num(v) + " s" : num(v); } }];
    spec.series.forEach(function (s) {
      series.push({
        label: s.label, stroke: s.color, width: s.width, alpha: s.faint ? 0.4 : 1,
        dash: s.dash ? [6, 4] : undefined, scale: s.right ? "y2" : "y", spanGaps: true,
        paths: s.noLine ? function () { return null; } : s.step ? uPlot.paths.stepped({ align: 1 }) : undefined,
        points: { show: !!s.points, size: s.noLine ? 7 : 5, fill: s.color },
        value: function (u, v) { return num(v); }
      });
    });
    var axes = [
      { label: spec.xLabel, space: 50, values: function (u, splits) { return splits.map(pctX ? pctTick : num); },
        splits: pctX ? function (u, i, min, max) { var out = []; for (var x = Math.ceil(min); x <= max; x++) out.push(x); return out; } : undefined },
      { label: spec.yLabel, scale: "y", size: axisSize, values: function (u, splits) { return splits.map(num); } }
    ];
    var scales = { x: { time: false }, y: { range: function () { return spec.yRange; } } };
    if (spec.y2Label) {
      axes.push({ label: spec.y2Label, scale: "y2", side: 1, size: axisSize, grid: { show: false }, values: function (u, splits) { return splits.map(num); } });
      scales.y2 = { range: function () { return spec.y2Range; } };
    }
    var u = new uPlot({
      title: spec.title, width: Math.max(320, Math.min(spec.width, avail)), height: spec.height,
      series: series, axes: axes, scales: scales,
      cursor: { drag: { x: true, y: false } },
      plugins: [bandsPlugin(spec.bands || []), wheelPlugin()]
    }, spec.data, el);
    var key = document.createElement("div");
    key.className = "bandkey";
    (spec.bands || []).forEach(function (b) {
      var sw = document.createElement("span");
      sw.className = "sw";
      sw.style.background = b.color;
      key.appendChild(sw);
      key.appendChild(document.createTextNode(b.label));
    });
    key.appendChild(document.createTextNode((spec.bands && spec.bands.length ? " · " : "") + "drag: zoom · alt+wheel: zoom · shift+wheel: pan · double-click: whole"));
    el.appendChild(key);
    fig.classList.add("live");
    return u;
  }

  document.querySelectorAll("figure.ufig").forEach(function (fig) {
    try { draw(fig); } catch (e) { console.error("sixpin chart: " + e); }
  });
})();
