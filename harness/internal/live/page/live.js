// sixpin's live page: renders each snapshot the server sends over
// Server-Sent Events (/events). Text goes in with textContent only.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const svgNS = "http://www.w3.org/2000/svg";
  // fmt: three significant figures, thousands separated (1,234,567).
  const fmt = (v) => {
    if (v === null || v === undefined || !isFinite(v)) return "–";
    const a = Math.abs(v);
    if (a >= 1000) return Math.round(v).toLocaleString("en-US");
    if (a >= 100) return v.toFixed(0);
    if (a >= 10) return v.toFixed(1);
    return v.toFixed(2);
  };
  const dur = (s) => {
    s = Math.max(0, Math.round(s));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    return (h ? h + "h" : "") + (h || m ? String(m).padStart(h ? 2 : 1, "0") + "m" : "") + String(r).padStart(h || m ? 2 : 1, "0") + "s";
  };
  const row = (tbody, cells) => {
    const tr = document.createElement("tr");
    for (const [text, cls] of cells) {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
  };
  const fill = (tbody, rows) => {
    tbody.replaceChildren();
    rows.forEach((r) => row(tbody, r));
  };

  // chart draws lines over the run clock [t0, t1]: each line's values are
  // one a second, the latest at t1. Its labels sit in a key above the
  // plot, one after another, so none prints over another.
  function chart(svg, lines, t0, t1) {
    svg.replaceChildren();
    const W = 520, H = 180, L = 56, R = 8, T = 22, B = 24;
    const el = (name, attrs, text) => {
      const e = document.createElementNS(svgNS, name);
      for (const k in attrs) e.setAttribute(k, attrs[k]);
      if (text !== undefined) e.textContent = text;
      svg.appendChild(e);
      return e;
    };
    let ymax = 0;
    lines.forEach((l) => l.values.forEach((v) => { if (isFinite(v)) ymax = Math.max(ymax, v); }));
    if (ymax <= 0) ymax = 1;
    const x = (t) => L + ((t - t0) / Math.max(t1 - t0, 1)) * (W - L - R);
    const y = (v) => H - B - (v / ymax) * (H - T - B);
    for (let i = 0; i <= 4; i++) {
      const v = (ymax * i) / 4;
      el("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" });
      el("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end" }, fmt(v));
    }
    el("text", { x: L, y: H - 6 }, fmt(t0) + " s");
    el("text", { x: W - R, y: H - 6, "text-anchor": "end" }, fmt(t1) + " s");
    let kx = L;
    lines.forEach((l) => {
      el("rect", { x: kx, y: 6, width: 10, height: 3, fill: l.colour });
      const t = el("text", { x: kx + 14, y: 12, class: "key" }, l.label);
      kx += 14 + t.getComputedTextLength() + 14;
      const n = l.values.length;
      if (!n) return;
      const d = l.values.map((v, i) => (i ? "L" : "M") + x(t1 - (n - 1 - i)).toFixed(1) + " " + y(v).toFixed(1)).join(" ");
      el("path", { d: d, class: "line", stroke: l.colour });
    });
  }

  // serverCharts are the server's series as charts: KV usage, then its
  // requests running and waiting, then its token rates — each series
  // where its name says.
  const serverCharts = [
    { id: "chart-kv", match: /kv/i, colours: ["#4e342e"] },
    { id: "chart-queue", match: /running|waiting/i, colours: ["#6a1b9a", "#c62828"] },
    { id: "chart-server-rate", match: /^server /i, colours: ["#ad1457", "#00838f"] },
  ];

  let finalShown = false;
  function render(s) {
    document.body.dataset.seq = String(s.seq);
    $("scenario").textContent = s.scenario || "…";
    $("sim").hidden = !s.simulated;
    $("state").textContent = s.state;
    $("step").textContent = s.step ? s.step + " ·" : "";
    $("target").textContent = s.target || "…";
    $("elapsed").textContent = dur(s.elapsed_s);
    let left = "";
    if (s.duration_s > 0) left = dur(s.duration_s - s.elapsed_s) + " left of " + dur(s.duration_s);
    else if (s.requests > 0) left = Math.max(s.requests - s.issued, 0).toLocaleString("en-US") + " of " + s.requests.toLocaleString("en-US") + " requests left to issue";
    $("left").textContent = left;
    const last = s.seconds && s.seconds.length ? s.seconds[s.seconds.length - 1] : null;
    $("agg").textContent = last ? fmt(last.aggregate_tok_s) : "–";
    $("perstream").textContent = last && last.in_flight > 0 ? fmt(last.per_stream_tok_s) : "–";
    $("inflight").textContent = String(s.in_flight);
    $("requests").textContent = s.done.toLocaleString("en-US") + " done of " + s.issued.toLocaleString("en-US") + " issued";
    $("tokens").textContent = s.output_tokens.toLocaleString("en-US");
    $("prompt").textContent = s.prompt_tokens.toLocaleString("en-US") + " prompt tokens (ended requests)";
    $("failed").textContent = String(s.failed);
    const classes = Object.keys(s.errors || {}).sort().map((k) => k + " " + s.errors[k]);
    $("errclasses").textContent = classes.length ? classes.join(" · ") : "none";
    const secs = s.seconds || [];
    const t0 = secs.length ? secs[0].at_s - 1 : 0, t1 = secs.length ? secs[secs.length - 1].at_s : 1;
    chart($("chart-agg"), [{ values: secs.map((p) => p.aggregate_tok_s), colour: "#2e7d32", label: "aggregate tok/s" }], t0, t1);
    chart($("chart-stream"), [{ values: secs.map((p) => p.per_stream_tok_s), colour: "#1565c0", label: "per-stream tok/s" },
      { values: secs.map((p) => p.in_flight), colour: "#9e9e9e", label: "in flight" }], t0, t1);
    const lat = [["TTFT", s.ttft_ms], ["ITL", s.itl_ms], ["E2E", s.e2e_ms], ["schedule lag", s.schedule_lag_ms]];
    fill($("latency"), lat.map(([name, p]) => [[name], [String(p.n), "n"], [p.n ? fmt(p.p50) : "–", "n"],
      [p.n ? fmt(p.p90) : "–", "n"], [p.n ? fmt(p.p99) : "–", "n"], [p.n ? fmt(p.max) : "–", "n"]]));
    fill($("windows"), (s.windows || []).map((w) => [[w.name], [fmt(w.start_s), "n"], [w.decided ? fmt(w.end_s) : "…", "n"],
      [w.decided ? "decided" + (w.note ? ": " + w.note : "") : w.note || "open", w.decided ? "decided" : "open"]]));
    fill($("pins"), (s.pins || []).map((p) => [[p.n + " " + p.name], [p.declared]]));
    const server = s.server || [];
    $("server-none").hidden = server.length > 0;
    $("server").hidden = server.length === 0;
    fill($("server-rows"), server.map((x) => [[x.name], [x.values.length ? fmt(x.values[x.values.length - 1]) : "–", "n"], [x.unit]]));
    serverCharts.forEach((c) => {
      const mine = server.filter((x) => c.match.test(x.name) && !serverCharts.some((o) => o !== c && serverCharts.indexOf(o) < serverCharts.indexOf(c) && o.match.test(x.name)));
      const fig = $(c.id).closest("figure");
      fig.hidden = mine.length === 0;
      if (mine.length) {
        chart($(c.id), mine.map((x, i) => ({ values: x.values, colour: c.colours[i % c.colours.length], label: x.name + " (" + x.unit + ")" })), t0, t1);
      }
    });
    if (s.final && !finalShown) {
      finalShown = true;
      $("report").src = "report";
      $("final").hidden = false;
    }
  }

  const es = new EventSource("events");
  es.onmessage = (e) => render(JSON.parse(e.data));
  es.onerror = () => {
    $("state").textContent = finalShown ? "finished (the live server has stopped)" : "disconnected: retrying";
    if (finalShown) es.close();
  };
})();
