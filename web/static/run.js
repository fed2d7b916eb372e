// The run page of "flipzero serve --run": it draws what the server reads
// from a training run's folder (metrics, matches, status, config) as
// charts drawn by hand in SVG, follows the run through server-sent events,
// and replays the self-play games the loop keeps.
"use strict";

const $ = (id) => document.getElementById(id);
let run = null;
let updates = 0;

const COLORS = {
  policy: "#e8590c", value: "#1c7ed6", rating: "#2b8a3e", evals: "#7048e8",
  positions: "#1098ad", trained: "#f08c00", window: "#1098ad", total: "#868e96",
  selfplay: "#4c6ef5", training: "#f59f00", arena: "#12b886", generation: "#868e96",
  first: "#343a40", second: "#e64980", draws: "#20c997",
  top1: "#d6336c", top3: "#ae3ec9", length: "#5c940d",
};

// ---- numbers and times ----

function fmt(v) {
  if (v === null || v === undefined || !isFinite(v)) return "—";
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toFixed(a >= 1e10 ? 0 : 1) + "G";
  if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 0 : 1) + "M";
  if (a >= 1e4) return (v / 1e3).toFixed(a >= 1e5 ? 0 : 1) + "k";
  if (a >= 100 || Number.isInteger(v)) return String(Math.round(v));
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v.toFixed(3);
}

function duration(s) {
  if (!isFinite(s) || s < 0) return "—";
  if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + " s";
  if (s < 3600) return Math.floor(s / 60) + " min " + String(Math.floor(s % 60)).padStart(2, "0") + " s";
  return Math.floor(s / 3600) + " h " + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + " min";
}

function since(iso) {
  const t = Date.parse(iso);
  return isNaN(t) ? NaN : Math.max(0, (Date.now() - t) / 1000);
}

// wdl writes a score in the one form flipzero prints scores in, from
// the side named before it: "W-D-L 10-1-9", wins, draws, losses; counts
// writes its numbers alone, under a W-D-L heading.
function wdl(wins, draws, losses) {
  return "W-D-L " + counts(wins, draws, losses);
}

function counts(wins, draws, losses) {
  return `${wins}-${draws}-${losses}`;
}

function num(v) {
  return typeof v === "number" && isFinite(v) ? v : null;
}

// ---- charts ----

// niceTicks returns about n round values over [lo, hi]: inside it, or
// when outward, from the round value at or below lo to the one at or
// above hi, for the axis to end on them.
function niceTicks(lo, hi, n, integer, outward) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / n;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  let step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  if (integer) step = Math.max(1, Math.round(step));
  const first = (outward ? Math.floor(lo / step) : Math.ceil(lo / step)) * step;
  const end = outward ? Math.ceil(hi / step - 1e-9) * step : hi;
  const out = [];
  for (let v = first; v <= end + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

// tick writes an axis value as short as it can be.
function tick(v) {
  return Math.abs(v) >= 1e4 ? fmt(v) : String(Number(v.toFixed(6)));
}

const W = 480, H = 230, M = { left: 50, right: 14, top: 26, bottom: 26 };

// chart draws series of [x, y] points into the figure's SVG: lines, or
// stacked bars when opts.stacked. Hovering shows the values at the
// nearest generation.
function chart(id, series, opts = {}) {
  const fig = $(id);
  const svg = fig.querySelector("svg");
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const points = series.reduce((n, s) => n + s.points.length, 0);
  fig.dataset.points = String(points);
  if (!points) {
    const t = el("text", { x: W / 2, y: H / 2, class: "empty" }, svg);
    t.textContent = opts.empty || "no data yet";
    return;
  }
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  let x0 = Math.min(...xs), x1 = Math.max(...xs);
  if (opts.stacked) { x0 -= 0.5; x1 += 0.5; }
  if (x1 === x0) { x0 -= 1; x1 += 1; }
  let ys;
  if (opts.stacked) {
    const sums = new Map();
    for (const s of series) for (const [x, y] of s.points) sums.set(x, (sums.get(x) || 0) + y);
    ys = [0, ...sums.values()];
  } else {
    ys = series.flatMap((s) => s.points.map((p) => p[1]));
  }
  let y0 = Math.min(...ys), y1 = Math.max(...ys);
  if (opts.yMin !== undefined) y0 = Math.min(y0, opts.yMin);
  if (opts.yMax !== undefined) y1 = Math.max(y1, opts.yMax);
  if (y1 === y0) { y0 -= Math.abs(y0) * 0.1 || 1; y1 += Math.abs(y1) * 0.1 || 1; }
  const yt = niceTicks(y0, y1, 5, false, true);
  y0 = yt[0]; y1 = yt[yt.length - 1];
  const px = (x) => M.left + (x - x0) / (x1 - x0) * (W - M.left - M.right);
  const py = (y) => H - M.bottom - (y - y0) / (y1 - y0) * (H - M.top - M.bottom);
  for (const v of yt) {
    el("line", { x1: M.left, x2: W - M.right, y1: py(v), y2: py(v), class: "grid" }, svg);
    const t = el("text", { x: M.left - 5, y: py(v) + 3, class: "tick", "text-anchor": "end" }, svg);
    t.textContent = (opts.yFormat || tick)(v);
  }
  for (const v of niceTicks(Math.ceil(x0), Math.floor(x1), 8, true)) {
    const t = el("text", { x: px(v), y: H - M.bottom + 14, class: "tick", "text-anchor": "middle" }, svg);
    t.textContent = String(v);
  }
  el("line", { x1: M.left, x2: W - M.right, y1: H - M.bottom, y2: H - M.bottom, class: "axis" }, svg);
  el("line", { x1: M.left, x2: M.left, y1: M.top - 4, y2: H - M.bottom, class: "axis" }, svg);
  const xlabel = el("text", { x: W - M.right, y: H - 2, class: "tick", "text-anchor": "end" }, svg);
  xlabel.textContent = "generation";
  // The legend along the top.
  let lx = M.left;
  for (const s of series) {
    el("rect", { x: lx, y: 7, width: 12, height: 4, fill: s.color }, svg);
    const t = el("text", { x: lx + 16, y: 13, class: "legend" }, svg);
    t.textContent = s.name;
    lx += 24 + 6.2 * s.name.length;
  }
  if (opts.stacked) {
    const bw = Math.max(1, Math.min(24, (px(1) - px(0)) * 0.8));
    const base = new Map();
    for (const s of series) {
      const g = el("g", { class: "bars", "data-name": s.name, "data-n": s.points.length }, svg);
      for (const [x, y] of s.points) {
        const b = base.get(x) || 0;
        el("rect", { x: px(x) - bw / 2, y: py(b + y), width: bw, height: Math.max(0, py(b) - py(b + y)), fill: s.color }, g);
        base.set(x, b + y);
      }
    }
  } else {
    for (const s of series) {
      if (!s.points.length) continue;
      const d = s.points.map(([x, y], i) => (i ? "L" : "M") + px(x).toFixed(1) + " " + py(y).toFixed(1)).join(" ");
      const attrs = { d, stroke: s.color, class: "series", "data-name": s.name, "data-n": s.points.length };
      if (s.dashed) attrs["stroke-dasharray"] = "5 4";
      el("path", attrs, svg);
      if (s.points.length <= 40) {
        for (const [x, y] of s.points) el("circle", { cx: px(x), cy: py(y), r: 2.5, fill: s.color }, svg);
      }
    }
  }
  hover(svg, series, px, py, opts);
}

// hover shows a generation's values under the pointer.
function hover(svg, series, px, py, opts) {
  const layer = el("g", { visibility: "hidden" }, svg);
  const line = el("line", { y1: M.top, y2: H - M.bottom, class: "hover-line" }, layer);
  const tip = el("g", { class: "tip" }, layer);
  const area = el("rect", { x: M.left, y: M.top, width: W - M.left - M.right, height: H - M.top - M.bottom, fill: "transparent", class: "hover-area" }, svg);
  const gens = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
  area.addEventListener("mouseleave", () => layer.setAttribute("visibility", "hidden"));
  area.addEventListener("mousemove", (ev) => {
    const box = svg.getBoundingClientRect();
    const x = (ev.clientX - box.left) / box.width * W;
    let best = gens[0];
    for (const g of gens) if (Math.abs(px(g) - x) < Math.abs(px(best) - x)) best = g;
    line.setAttribute("x1", px(best));
    line.setAttribute("x2", px(best));
    tip.replaceChildren();
    const lines = ["generation " + best];
    for (const s of series) {
      const p = s.points.find((p) => p[0] === best);
      if (p) lines.push(s.name + ": " + (opts.tipFormat || fmt)(p[1]));
    }
    const w = 12 + 6.2 * Math.max(...lines.map((l) => l.length)), h = 6 + 14 * lines.length;
    const tx = px(best) + 8 + w > W ? px(best) - 8 - w : px(best) + 8;
    el("rect", { x: tx, y: M.top, width: w, height: h, rx: 4 }, tip);
    lines.forEach((l, i) => {
      const t = el("text", { x: tx + 6, y: M.top + 15 + 14 * i }, tip);
      t.textContent = l;
    });
    layer.setAttribute("visibility", "visible");
  });
}

// drawLoss draws the losses of the generations that trained, or says
// why there are none yet: the loop at work on the first (its losses come
// with its metrics, once it ends), or a window still below min_samples.
function drawLoss(ms) {
  const trained = ms.filter((m) => m.steps > 0);
  chart("chart-loss", [
    { name: "policy", color: COLORS.policy, points: trained.filter((m) => num(m.policy_loss) !== null).map((m) => [m.generation, m.policy_loss]) },
    { name: "value", color: COLORS.value, points: trained.filter((m) => num(m.value_loss) !== null).map((m) => [m.generation, m.value_loss]) },
    { name: "value of a constant guess", color: COLORS.value, dashed: true, points: trained.map((m) => [m.generation, constantValueLoss(m)]).filter(([, v]) => v !== null) },
  ].filter((s) => s.points.length || !s.dashed), { empty: noLossYet(ms) });
}

// constantValueLoss is the value loss of a network that predicts the
// same win, draw and loss shares for every position: the entropy of the
// generation's outcomes from the mover's side, where a win and a loss
// are equally common (each game is won by one side and lost by the
// other) and draws are the games' share d: -(1-d) ln((1-d)/2) - d ln d.
// A value loss on or above it says the value head has learned nothing
// of the positions. Null for games without wins and losses to count.
function constantValueLoss(m) {
  if (!(m.games > 0) || !Array.isArray(m.results) || m.results.length !== 3 || num(m.score) !== null) return null;
  const d = m.results[2] / m.games;
  const term = (p) => (p > 0 ? -p * Math.log(p) : 0);
  return 2 * term((1 - d) / 2) + term(d);
}

function noLossYet(ms) {
  const st = run && run.status;
  if (st && st.phase === "training" && !st.silent) return `generation ${st.generation} is training: its losses show when it ends`;
  if (ms.length) return "no training yet: the window is still below train.min_samples";
  if (st && st.phase !== "stopped" && !st.silent) return `generation ${st.generation} is in ${st.phase}: the losses show once a generation has trained`;
  return "no training yet";
}

// drawAgreement draws the network's agreement with held-out games,
// measured every eval.every generations on eval.records (a pretrained
// generation 0 too).
function drawAgreement(ms) {
  const measured = ms.filter((m) => m.agreement && num(m.agreement.top1 && m.agreement.top1.value) !== null);
  const pct = (key) => measured.map((m) => [m.generation, 100 * m.agreement[key].value]);
  chart("chart-agreement", [
    { name: "top-1", color: COLORS.top1, points: pct("top1") },
    { name: "top-3", color: COLORS.top3, points: pct("top3") },
  ], { empty: "not measured: eval.records in the config names games to measure on", tipFormat: (v) => v.toFixed(1) + "%" });
}

function drawCharts(ms) {
  const trained = ms.filter((m) => m.steps > 0);
  drawLoss(ms);
  // A run whose arena is off charts the ratings fitted to its matches.
  let rated = ms.filter((m) => num(m.rating) !== null).map((m) => [m.generation, m.rating]), name = "Elo";
  if (!rated.length) {
    rated = fittedGenerations().map(([g, r]) => [g, r.elo]);
    name = `Elo fitted to the matches, ${run.ratingsAnchor} 0`;
  }
  chart("chart-rating", [
    { name, color: COLORS.rating, points: rated },
  ], { empty: arenaOff() ? "no ratings: the arena is off (arena.games in the config); rate a checkpoint with flipzero arena --run" : "no ratings yet: each generation is rated after its arena",
    tipFormat: (v) => v.toFixed(0) });
  drawAgreement(ms);
  chart("chart-evals", [
    { name: "evaluations/s", color: COLORS.evals, points: ms.filter((m) => num(m.evals_per_s) > 0).map((m) => [m.generation, m.evals_per_s]) },
  ], { yMin: 0 });
  chart("chart-rates", [
    { name: "positions/s played", color: COLORS.positions, points: ms.filter((m) => num(m.positions_per_s) > 0).map((m) => [m.generation, m.positions_per_s]) },
    { name: "samples/s trained", color: COLORS.trained, points: trained.filter((m) => num(m.train_samples_per_s) > 0).map((m) => [m.generation, m.train_samples_per_s]) },
  ], { yMin: 0 });
  chart("chart-length", [
    { name: "moves a game", color: COLORS.length, points: ms.filter((m) => m.games > 0 && num(m.moves) > 0).map((m) => [m.generation, m.moves / m.games]) },
  ], { yMin: 0 });
  chart("chart-positions", [
    { name: "window", color: COLORS.window, points: ms.filter((m) => num(m.window) !== null).map((m) => [m.generation, m.window]) },
    { name: "played in all", color: COLORS.total, points: ms.filter((m) => num(m.samples_total) !== null).map((m) => [m.generation, m.samples_total]) },
  ], { yMin: 0 });
  // Generations written before the split by phase show their whole time.
  const split = ms.filter((m) => num(m.selfplay_seconds) > 0 || num(m.train_seconds) > 0);
  const whole = ms.filter((m) => !(num(m.selfplay_seconds) > 0 || num(m.train_seconds) > 0) && num(m.seconds) > 0);
  const timeSeries = [
    { name: "self-play", color: COLORS.selfplay, points: split.map((m) => [m.generation, m.selfplay_seconds || 0]) },
    { name: "training", color: COLORS.training, points: split.map((m) => [m.generation, m.train_seconds || 0]) },
    { name: "arena", color: COLORS.arena, points: split.filter((m) => m.arena_seconds > 0).map((m) => [m.generation, m.arena_seconds]) },
  ];
  if (whole.length) timeSeries.push({ name: "generation", color: COLORS.generation, points: whole.map((m) => [m.generation, m.seconds]) });
  chart("chart-time", timeSeries.filter((s) => s.points.length), { stacked: true, tipFormat: (v) => duration(v) });
  // A one-player game's generations carry their mean score instead of
  // wins and losses worth drawing.
  const scored = ms.filter((m) => m.games > 0 && num(m.score) !== null);
  if (scored.length) {
    chart("chart-results", [
      { name: "mean score in self-play", color: COLORS.first, points: scored.map((m) => [m.generation, m.score]) },
      { name: "mean score in the arena", color: COLORS.second, points: ms.filter((m) => num(m.arena_score) !== null).map((m) => [m.generation, m.arena_score]) },
    ].filter((s) => s.points.length), { yMin: 0, tipFormat: (v) => v.toFixed(2) });
    return;
  }
  const played = ms.filter((m) => m.games > 0 && Array.isArray(m.results) && m.results.length === 3);
  const frac = (i) => played.map((m) => [m.generation, m.results[i] / m.games]);
  chart("chart-results", [
    { name: "first player wins", color: COLORS.first, points: frac(0) },
    { name: "second player wins", color: COLORS.second, points: frac(1) },
    { name: "draws", color: COLORS.draws, points: frac(2) },
  ], { yMin: 0, yMax: 1, yFormat: (v) => Math.round(v * 100) + "%", tipFormat: (v) => (v * 100).toFixed(0) + "%" });
}

// ---- the generation in progress, the tiles ----

function lastMetrics() {
  return run && run.metrics.length ? run.metrics[run.metrics.length - 1] : null;
}

function drawStatus() {
  if (!run) return;
  const st = run.status, m = lastMetrics();
  const box = $("now");
  let line, detail = "", fraction = 0;
  box.classList.toggle("stopped", !st || st.phase === "stopped" || !!st.silent);
  if (st && st.silent) {
    // The server saw no heartbeat for several beats: the loop was
    // killed, crashed or lost its machine without saying it stopped.
    line = `The loop stopped without a word during generation ${st.generation}'s ${st.phase}`;
    const where = st.host ? ` on ${st.host}` + (st.pid ? ` (process ${st.pid})` : "") : "";
    detail = `last heard from it ${duration(since(st.updated))} ago${where}: killed or crashed? flipzero loop --run ${run.run} resumes it`;
    fraction = st.total > 0 ? st.done / st.total : 0;
  } else if (st && st.phase !== "stopped") {
    const what = st.unit || (st.phase === "training" ? "steps" : "games");
    line = `Generation ${st.generation}: ${st.phase}`;
    if (st.total > 0) {
      line += ` — ${st.done} / ${st.total} ${what}`;
      fraction = st.done / st.total;
    }
    const inPhase = since(st.phase_started), inGen = since(st.generation_started), quiet = since(st.updated);
    const parts = [`${st.phase} for ${duration(inPhase)}`, `generation for ${duration(inGen)}`];
    if (st.done > 0 && st.total > st.done) parts.push(`about ${duration(inPhase * (st.total - st.done) / st.done)} left in ${st.phase}`);
    if (m && num(m.seconds) > 0) parts.push(`the last generation took ${duration(m.seconds + (m.arena_seconds || 0))}`);
    // Self-play games end together (they move in lockstep), so a slow
    // game may show no progress for as long as a whole phase took before.
    const usual = m ? 2 * ((m.seconds || 0) + (m.arena_seconds || 0)) : 0;
    if (quiet > Math.max(600, usual)) parts.push(`no news from the loop for ${duration(quiet)}: is it still running?`);
    detail = parts.join(" · ");
  } else if (st) {
    line = m ? `Stopped after generation ${m.generation}` : "Stopped";
    detail = `the loop ended ${duration(since(st.updated))} ago; flipzero loop --run ${run.run} resumes it`;
    fraction = 1;
  } else if (m) {
    line = `Generation ${m.generation} done`;
    detail = `finished ${duration(since(m.time) - m.seconds)} ago (this run's loop writes no status file)`;
    fraction = 1;
  } else {
    line = "Waiting for the first generation…";
  }
  drawLive();
  $("status-line").textContent = line;
  $("status-detail").textContent = detail;
  $("progress-bar").style.width = (100 * Math.min(1, Math.max(0, fraction))).toFixed(1) + "%";
}

function tile(name, value, sub) {
  const d = document.createElement("div");
  d.className = "tile";
  for (const [cls, text] of [["name", name], ["value", value], ["sub", sub || ""]]) {
    const e = document.createElement("div");
    e.className = cls;
    e.textContent = text;
    d.appendChild(e);
  }
  return d;
}

function drawTiles() {
  const m = lastMetrics();
  const ms = run.metrics;
  const games = ms.reduce((n, g) => n + (g.games || 0), 0);
  const st = run.status;
  const inProgress = st && st.phase !== "stopped" ? "in progress: " + st.generation : "";
  const tiles = [
    tile("Generation", m ? String(m.generation) : "—", inProgress),
    tile("Training steps", m ? fmt(m.step) : "—", m ? fmt(m.steps) + " in the last generation" : ""),
    tile("Positions", m ? fmt(m.samples_total) : "—", m ? "window " + fmt(m.window) : ""),
    rateTile(m, ms),
    tile("Policy loss", m && m.steps > 0 ? fmt(m.policy_loss) : "—", m && m.steps > 0 ? "value loss " + fmt(m.value_loss)
      + (num(m.policy_surprise) !== null ? ", surprise " + m.policy_surprise.toFixed(3) : "") : ""),
    ratingTile(m),
    tile("Games", fmt(games), m && num(m.score) !== null ? `last: mean score ${m.score.toFixed(2)}`
      : m && m.results ? `last: first player ${wdl(m.results[0], m.results[2], m.results[1])}` : ""),
    tile("Run time", m ? duration(m.run_seconds) : "—", m ? "learning rate " + fmt(m.learning_rate) : ""),
  ];
  $("tiles").replaceChildren(...tiles);
}

// arenaOff says that the run's config measures no generation, as the
// shipped configs but tic-tac-toe's: ratings then come from matches
// added with flipzero arena --run.
function arenaOff() {
  const a = run.settings.find((s) => s.name === "arena");
  return !!a && a.value === "off";
}

// ratingTile shows the newest generation's Elo, or how to get one.
function ratingTile(m) {
  if (m && num(m.rating) !== null) {
    return tile("Rating", (Math.round(m.rating) || 0).toFixed(0), m.best !== m.generation && m.best !== undefined ? "self-play uses gen " + m.best : "Elo");
  }
  const fitted = fittedGenerations();
  if (fitted.length) {
    const [g, r] = fitted[fitted.length - 1];
    return tile("Rating", r.elo.toFixed(0), `gen ${g}, ${r.low.toFixed(0)} to ${r.high.toFixed(0)} (${run.ratingsAnchor} 0), from the matches`);
  }
  if (arenaOff()) return tile("Rating", "—", "arena off: rate with flipzero arena --run, see Matches");
  return tile("Rating", "—", m ? "Elo" : "after the first generation's arena");
}

// rateTile shows self-play's last measured rate: a generation whose
// games were saved before a stop and reused has none of its own, and
// workers elsewhere report no evaluations.
function rateTile(m, ms) {
  const rated = [...ms].reverse().find((g) => num(g.positions_per_s) > 0);
  if (!rated) return tile("Evaluations/s", "—", m && m.reused_selfplay ? `generation ${m.generation} reused its saved games` : "");
  let sub = fmt(rated.positions_per_s) + " positions/s";
  if (rated !== m) sub += ` in generation ${rated.generation}` + (m.reused_selfplay ? `; ${m.generation} reused its saved games` : "");
  if (num(rated.cache_share) > 0) sub += `, ${Math.round(100 * rated.cache_share)}% answered by the cache`;
  return tile("Evaluations/s", num(rated.evals_per_s) > 0 ? fmt(rated.evals_per_s) : "—", sub);
}

// fittedGenerations are the run's checkpoints among the ratings fitted
// to its matches, as [generation, rating], oldest first: the loop names
// them gen-NNNNNN, flipzero arena --run by their path, which ends so.
function fittedGenerations() {
  const byGen = new Map();
  for (const r of run.ratings) {
    const g = /gen-0*(\d+)(\.\w+)?$/.exec(r.player);
    if (g && !byGen.has(Number(g[1]))) byGen.set(Number(g[1]), r);
  }
  return [...byGen].sort((a, b) => a[0] - b[0]);
}

// drawRatings lists every player's fitted rating, or says why none.
function drawRatings() {
  const rows = run.ratings;
  $("ratings").hidden = !rows.length;
  $("ratings-note").hidden = rows.length > 0;
  $("ratings-note").textContent = "No ratings: " + (run.ratingsNote || "no matches yet.");
  $("ratings").querySelector("caption").textContent =
    `Elo fitted to every match of the run (as flipzero ratings fits them), ${run.ratingsAnchor} rated 0, with its 95% interval`;
  $("ratings").querySelector("tbody").replaceChildren(...rows.map((r) => {
    const tr = document.createElement("tr");
    // The anchor is 0 by definition: it has no interval.
    const anchor = r.player === run.ratingsAnchor;
    for (const v of [r.player, r.elo.toFixed(0), anchor ? "—" : r.low.toFixed(0), anchor ? "—" : r.high.toFixed(0), r.games]) {
      const td = document.createElement("td");
      td.textContent = String(v);
      tr.appendChild(td);
    }
    return tr;
  }));
}

function drawMatches() {
  const rows = run.matches.slice(-20).reverse();
  $("matches").hidden = !rows.length;
  $("matches-none").hidden = rows.length > 0;
  $("matches").querySelector("tbody").replaceChildren(...rows.map((r) => {
    const tr = document.createElement("tr");
    const n = r.wins + r.draws + r.losses;
    // A one-player match also has both players' mean scores on its deals.
    const score = num(r.mean_a) !== null && num(r.mean_b) !== null ? r.mean_a.toFixed(2) + " vs " + r.mean_b.toFixed(2)
      : n ? ((r.wins + r.draws / 2) / n * 100).toFixed(0) + "%" : "—";
    for (const v of [r.generation || "", r.a, r.b, counts(r.wins, r.draws, r.losses), score, (r.time || "").replace("T", " ").replace("Z", "")]) {
      const td = document.createElement("td");
      td.textContent = String(v);
      tr.appendChild(td);
    }
    return tr;
  }));
}

function drawConfig() {
  $("settings").replaceChildren(...run.settings.flatMap((s) => {
    const dt = document.createElement("dt"), dd = document.createElement("dd");
    dt.textContent = s.name;
    dd.textContent = s.value;
    return [dt, dd];
  }));
  $("config").textContent = run.config;
}

function render() {
  $("run-name").textContent = run.run;
  $("game-name").textContent = run.game;
  document.title = "flipzero " + run.run;
  const m = lastMetrics();
  document.body.dataset.generation = m ? String(m.generation) : "";
  document.body.dataset.updates = String(++updates);
  const problems = [...run.problems];
  if (run.metricsSkipped) problems.push(`${run.metricsSkipped} line(s) of metrics.jsonl are not a generation's metrics and were skipped`);
  if (run.matchesSkipped) problems.push(`${run.matchesSkipped} line(s) of matches.jsonl are not a match and were skipped`);
  $("problems").hidden = !problems.length;
  $("problems").textContent = problems.join("; ");
  $("checks").hidden = !run.checks.length;
  $("checks").textContent = run.checks.map((c) => "Check: " + c).join("\n");
  drawStatus();
  drawTiles();
  drawCharts(run.metrics);
  drawMatches();
  drawRatings();
  drawConfig();
  updateGenerations();
}

// ---- replays ----

const replay = { gen: null, chosen: false, index: 0, data: null, ply: 0, timer: null };

async function getJSON(path) {
  const res = await fetch(path, { cache: "no-store" });
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

// updateGenerations lists the generations with games; the newest is
// shown until the person picks one.
function updateGenerations() {
  const sel = $("replay-gen");
  const gens = [...run.recorded].reverse();
  $("replay-none").hidden = gens.length > 0;
  $("replay").hidden = !gens.length;
  const have = [...sel.options].map((o) => o.value).join(",");
  if (have !== gens.join(",")) {
    sel.replaceChildren(...gens.map((g) => new Option("generation " + g, String(g))));
  }
  if (!gens.length) return;
  if (!replay.chosen && replay.gen !== gens[0]) {
    loadGeneration(gens[0]);
  } else if (replay.gen !== null) {
    sel.value = String(replay.gen);
  }
}

async function loadGeneration(gen) {
  replay.gen = gen;
  $("replay-gen").value = String(gen);
  try {
    const list = await getJSON("api/run/games?gen=" + gen);
    if (replay.gen !== gen) return;
    $("replay-game").replaceChildren(...list.games.map((g) =>
      new Option(`game ${g.index + 1}: ${g.plies} moves, ${g.outcome === "draw" || g.outcome.startsWith("score ") ? g.outcome : g.outcome + " wins"}`, String(g.index))));
    if (list.games.length) await loadGame(gen, 0);
  } catch (err) {
    $("replay-status").textContent = "Could not load the games: " + err.message;
  }
}

async function loadGame(gen, index) {
  stopAutoplay();
  try {
    const data = await getJSON(`api/run/game?gen=${gen}&game=${index}`);
    if (replay.gen !== gen) return;
    replay.index = index;
    replay.data = data;
    $("replay-game").value = String(index);
    $("replay-slider").max = String(data.frames.length - 1);
    const moves = $("replay-moves");
    moves.replaceChildren(...data.moves.map((mv, i) => {
      const li = document.createElement("li");
      const n = document.createElement("span");
      n.className = "n";
      n.textContent = (i + 1) + ".";
      li.append(n, mv);
      li.onclick = () => show(i + 1);
      return li;
    }));
    show(0);
  } catch (err) {
    $("replay-status").textContent = "Could not load the game: " + err.message;
  }
}

function show(ply) {
  const d = replay.data;
  if (!d) return;
  ply = Math.max(0, Math.min(d.frames.length - 1, ply));
  replay.ply = ply;
  const f = d.frames[ply];
  const cells = d.cells.map((c) => ({ ...c, piece: f.pieces[c.name] || "" }));
  drawCells($("replay-board"), d.game, d.board, cells, f.last);
  const n = d.moves.length;
  let text = ply === 0 ? `Start of game ${d.index + 1} (generation ${d.generation})` : `Move ${ply} of ${n}: ${d.moves[ply - 1]}`;
  if (ply === n) text += " — " + d.result;
  else if (f.toMove) text += ` — ${f.toMove} to move`;
  if (ply === n && d.error) text += ": " + d.error;
  $("replay-status").textContent = text;
  $("replay-score").textContent = f.score;
  $("replay-slider").value = String(ply);
  $("replay").dataset.ply = String(ply);
  const items = $("replay-moves").children;
  for (let i = 0; i < items.length; i++) items[i].classList.toggle("current", i === ply - 1);
  const cur = items[ply - 1];
  if (cur) {
    const list = $("replay-moves");
    if (cur.offsetTop < list.scrollTop || cur.offsetTop > list.scrollTop + list.clientHeight - cur.offsetHeight) {
      list.scrollTop = cur.offsetTop - list.clientHeight / 2;
    }
  }
}

function stopAutoplay() {
  if (replay.timer) clearInterval(replay.timer);
  replay.timer = null;
  $("autoplay").textContent = "play";
}

function toggleAutoplay() {
  if (replay.timer) return stopAutoplay();
  if (!replay.data) return;
  if (replay.ply >= replay.data.frames.length - 1) show(0);
  $("autoplay").textContent = "pause";
  replay.timer = setInterval(() => {
    if (replay.ply >= replay.data.frames.length - 1) return stopAutoplay();
    show(replay.ply + 1);
  }, 600);
}

$("replay-gen").onchange = () => { replay.chosen = true; loadGeneration(Number($("replay-gen").value)); };
$("replay-game").onchange = () => loadGame(replay.gen, Number($("replay-game").value));
$("first").onclick = () => { stopAutoplay(); show(0); };
$("prev").onclick = () => { stopAutoplay(); show(replay.ply - 1); };
$("next").onclick = () => { stopAutoplay(); show(replay.ply + 1); };
$("last").onclick = () => { stopAutoplay(); if (replay.data) show(replay.data.frames.length - 1); };
$("autoplay").onclick = toggleAutoplay;
$("replay-slider").oninput = () => { stopAutoplay(); show(Number($("replay-slider").value)); };
document.addEventListener("keydown", (ev) => {
  if (ev.target.closest && ev.target.closest("select, input, textarea")) return;
  const keys = { ArrowLeft: () => show(replay.ply - 1), ArrowRight: () => show(replay.ply + 1), Home: () => show(0),
    End: () => replay.data && show(replay.data.frames.length - 1) };
  if (keys[ev.key]) { stopAutoplay(); keys[ev.key](); ev.preventDefault(); }
  else if (ev.key === " " && ev.target === document.body) { toggleAutoplay(); ev.preventDefault(); }
});

// ---- following the run ----

function receive(view) {
  // Whatever the server sends, the lists the page walks are lists.
  for (const k of ["metrics", "matches", "recorded", "checks", "problems", "settings"]) {
    if (!Array.isArray(view[k])) view[k] = [];
  }
  run = view;
  render();
}

// connection is the page's link to the server: "live", "polling", or
// what went wrong.
let connection = { text: "connecting…", ok: false };

// drawLive shows the link to the server and, over it, whether the loop
// runs: a green dot only while it does.
function drawLive() {
  const live = $("live"), st = run && run.status;
  const running = st && st.phase !== "stopped" && !st.silent;
  if (!connection.ok) {
    live.textContent = connection.text;
    live.className = "live off";
  } else if (!running) {
    live.textContent = st && st.silent ? "loop silent" : "loop stopped";
    live.className = "live idle";
  } else {
    live.textContent = connection.text;
    live.className = "live on";
  }
  live.dataset.state = live.className.replace("live ", "");
}

function connected(text, ok) {
  connection = { text, ok };
  drawLive();
}

// onEvent takes an event of the run's stream: "run", the whole view, or
// "status", the generation in progress alone.
function onEvent(type, data) {
  if (type === "run") {
    connection = { text: "live", ok: true };
    try { receive(JSON.parse(data)); } catch (err) { $("problems").hidden = false; $("problems").textContent = "bad update: " + err; }
    return;
  }
  if (!run) return;
  try { run.status = JSON.parse(data).status; } catch (err) { return; }
  document.body.dataset.updates = String(++updates);
  drawStatus();
  drawTiles();
  // Until a generation has trained, the loss chart says what the loop is at.
  if (!run.metrics.some((m) => m.steps > 0)) drawLoss(run.metrics);
}

// follow keeps the page up to date: through the event stream, held by a
// worker (events.js) where the browser has workers, else by the page;
// without server-sent events, by asking every two seconds. Beside a
// worker's stream the page asks for the run once itself, with a request
// that ends, so that a tool waiting for the page's requests to end
// (a headless browser's --virtual-time-budget) finds it drawn.
function follow() {
  if (!window.Worker) return followInPage();
  let streamed = false;
  getJSON("api/run").then((v) => { if (!streamed) receive(v); }, () => {});
  const worker = new Worker("events.js");
  const inPage = () => { worker.terminate(); followInPage(); };
  worker.onmessage = (msg) => {
    const { type, data } = msg.data;
    if (type === "open") connected("live", true);
    else if (type === "error") connected("reconnecting…", false);
    else if (type === "unsupported") inPage();
    else {
      streamed = streamed || type === "run";
      onEvent(type, data);
    }
  };
  worker.onerror = (ev) => { ev.preventDefault(); inPage(); };
}

function followInPage() {
  if (window.EventSource) return stream();
  const poll = () => getJSON("api/run").then((v) => { receive(v); connected("polling", true); },
    () => connected("the server does not answer", false));
  poll();
  setInterval(poll, 2000);
}

// stream holds the event stream in the page.
function stream() {
  const es = new EventSource("api/run/events");
  for (const type of ["run", "status"]) es.addEventListener(type, (ev) => onEvent(type, ev.data));
  es.onopen = () => connected("live", true);
  // EventSource reconnects by itself.
  es.onerror = () => connected("reconnecting…", false);
}

// A server that also plays the model serves the game at / (alone, it
// leads / here): link it.
fetch("./", { method: "HEAD", cache: "no-store" }).then((res) => {
  if (res.ok && !res.redirected) $("play-link").hidden = false;
}, () => {});

// The times in the status line move on between updates.
setInterval(drawStatus, 1000);
follow();
