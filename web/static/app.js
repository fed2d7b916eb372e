// The play page, served by "flipzero serve" or exported by "flipzero
// export --web": it draws the game it is sent as JSON (with board.js) and
// turns clicks into moves. The engine knows the rules; the page only
// picks among the legal moves it lists. Who answers is the transport's
// business: the server that served the page, or, in an exported page, the
// engine inside the page (engine.js), with the same requests and answers.
"use strict";

let view = null;
// pending is a decision under way: a ring picked to move, or the rows that
// contain the markers clicked so far.
let pending = null;
let busy = false;
// transport answers the page's requests: request(method, path, body) →
// {status, data}.
let transport = null;

const $ = (id) => document.getElementById(id);

// serverTransport sends requests to the server that served the page.
const serverTransport = {
  engine: "server",
  async request(method, path, body) {
    const res = await fetch(path, {
      method,
      headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, data: await res.json() };
  },
};

async function call(method, path, body) {
  if (!transport) return;
  busy = true;
  document.body.dataset.busy = "true";
  $("message").textContent = "";
  if (method === "POST") $("status").textContent = "flipzero is thinking…";
  try {
    const { status, data } = await transport.request(method, path, body);
    if (status !== 200) {
      $("message").textContent = data.error || "status " + status;
      render();
      return;
    }
    view = data;
    pending = null;
    render();
  } catch (err) {
    $("message").textContent = (transport.engine === "server" ? "The server did not answer: " : "The engine failed: ") + err;
    render();
  } finally {
    busy = false;
    document.body.dataset.busy = "false";
  }
}

function play(move) {
  if (busy) return;
  call("POST", "api/move", { move });
}

function render() {
  if (!view) return;
  document.body.dataset.ply = String(view.history.length);
  document.body.dataset.game = view.game;
  $("game-name").textContent = view.game;
  if (view.over) {
    $("status").textContent = "Game over: " + view.result + ".";
  } else if (view.yourTurn && view.solo) {
    $("status").textContent = "Your turn: " + view.prompt + ".";
  } else if (view.yourTurn) {
    $("status").textContent = "Your turn (" + view.human + "): " + view.prompt + ".";
  } else {
    $("status").textContent = "flipzero (" + view.bot + ") to play.";
  }
  $("score").textContent = view.score;
  $("evaluation").textContent = view.replies.length
    ? "flipzero played " + view.replies.map((r) => r.move + " (" + judgement(r, "its") + ")").join(", then ")
    : "";
  if (view.hint) $("message").textContent = "Hint: " + view.hint.move + " (" + judgement(view.hint, "your") + ")";
  renderNetwork();
  renderStrength();
  renderTop();
  const side = $("side");
  if (!side.options.length) {
    for (const name of [...new Set([view.human, view.bot])].sort()) side.add(new Option(name, name));
    side.value = view.human;
  }
  $("side-label").hidden = view.solo;
  $("bot").hidden = !(view.solo && view.yourTurn && !view.over);
  $("pass").hidden = !(view.yourTurn && view.legal.some((m) => m.kind === "pass"));
  $("hint").disabled = view.over;
  const hist = $("history");
  hist.replaceChildren(...view.history.map((m) => {
    const li = document.createElement("li");
    li.textContent = m;
    return li;
  }));
  hist.scrollTop = hist.scrollHeight;
  if (document.activeElement !== $("record")) $("record").value = view.record;
  drawBoard();
  drawChoices();
}

// judgement says what a search thinks of the position for whose side
// ("its", "your"): the chance of winning, or the score a one-player game
// expects, or the result it proved.
function judgement(r, whose) {
  const effort = r.playouts + " playouts in " + r.seconds.toFixed(1) + " s";
  if (r.expected != null) return "expects a score of " + r.expected.toFixed(1) + ", " + effort;
  if (r.proven) return "a proven " + r.proven + " for " + (whose === "its" ? "flipzero" : "you") + ", " + effort;
  return whose + " chance of winning " + Math.round(100 * r.win) + "%, eval " + signed(r.value) + ", " + effort;
}

function signed(v) {
  return (v >= 0 ? "+" : "") + v.toFixed(2);
}

function renderNetwork() {
  const n = view.network;
  const where = transport.engine === "page" ? "in this page (WebAssembly, no server)" : "on the server";
  const strength = view.strength.seconds > 0 ? view.strength.seconds + " s a move" : view.strength.playouts + " playouts a move";
  let text = "";
  if (n) {
    text = n.game + " network" + (n.generation ? ", generation " + n.generation : "") +
      ", " + n.filters + "×" + n.blocks + " (" + n.parameters.toLocaleString("en") + " parameters), " +
      n.steps.toLocaleString("en") + " training steps" + (n.created ? ", made " + n.created.slice(0, 10) : "") + "; ";
  }
  $("network").textContent = "Plays: " + text + strength + ", " + view.search + "; " + where + ".";
}

// The strengths offered: playouts a move, and seconds a move.
const playoutChoices = [25, 50, 100, 200, 400, 800, 1600, 3200];
const secondChoices = [1, 2, 5, 10];

function renderStrength() {
  const sel = $("strength");
  const current = view.strength.seconds > 0 ? "s" + view.strength.seconds : "p" + view.strength.playouts;
  if (sel.dataset.current === current) return;
  const opts = playoutChoices.map((p) => ["p" + p, p + " playouts a move"])
    .concat(secondChoices.map((s) => ["s" + s, s + " s a move"]));
  if (!opts.some(([v]) => v === current)) {
    opts.unshift([current, view.strength.seconds > 0 ? view.strength.seconds + " s a move" : view.strength.playouts + " playouts a move"]);
  }
  sel.replaceChildren(...opts.map(([v, label]) => new Option(label, v)));
  sel.value = current;
  sel.dataset.current = current;
}

// renderTop lists the last search's most visited moves, with the
// network's prior for each (the policy), when asked to.
function renderTop() {
  const r = view.hint || view.replies[view.replies.length - 1];
  const box = $("top");
  box.hidden = !$("show-top").checked || !r;
  if (box.hidden) return;
  const rows = r.top.map((c) => {
    const tr = document.createElement("tr");
    const value = c.value == null ? "" : r.expected != null ? "" : Math.round(50 * (1 + c.value)) + "%";
    for (const text of [c.move, String(c.visits), (100 * c.prior).toFixed(1) + "%", value]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.appendChild(td);
    }
    return tr;
  });
  $("top-for").textContent = view.hint ? "your move (hint)" : "flipzero's last move";
  $("top-rows").replaceChildren(...rows);
}

// clickable lists the points a click can act on now, and marks what the
// pending decision has picked.
function targets() {
  const out = new Set();
  if (!view.yourTurn || view.over) return out;
  if (pending && pending.kind === "move") {
    for (const m of view.legal) if (m.kind === "move" && m.points[0] === pending.from) out.add(m.points[1]);
    return out;
  }
  if (pending && pending.kind === "row") {
    for (const m of pending.rows) for (const p of m.points) out.add(p);
    return out;
  }
  for (const m of view.legal) {
    if (m.kind === "point" || m.kind === "move") out.add(m.points[0]);
    if (m.kind === "row") for (const p of m.points) out.add(p);
  }
  return out;
}

function clickPoint(name) {
  if (busy || !view || !view.yourTurn || view.over) return;
  if (pending && pending.kind === "move") {
    const m = view.legal.find((m) => m.kind === "move" && m.points[0] === pending.from && m.points[1] === name);
    if (m) return play(m.move);
  }
  if (pending && pending.kind === "row") {
    const rows = pending.rows.filter((m) => m.points.includes(name));
    if (rows.length === 1) return play(rows[0].move);
    if (rows.length > 1) {
      pending = { kind: "row", rows, picked: name };
      return render();
    }
  }
  pending = null;
  const singles = view.legal.filter((m) => m.kind === "point" && m.points[0] === name);
  if (singles.length === 1) return play(singles[0].move);
  if (singles.length > 1) {
    // Single-line Reversi: one move per direction from the same square.
    pending = { kind: "choice", moves: singles, picked: name };
    return render();
  }
  if (view.legal.some((m) => m.kind === "move" && m.points[0] === name)) {
    pending = { kind: "move", from: name, picked: name };
    return render();
  }
  const rows = view.legal.filter((m) => m.kind === "row" && m.points.includes(name));
  if (rows.length === 1) return play(rows[0].move);
  if (rows.length > 1) {
    pending = { kind: "row", rows, picked: name };
    return render();
  }
  $("message").textContent = "No legal move there.";
  render();
}

function drawChoices() {
  const box = $("choices");
  box.replaceChildren();
  if (pending && pending.kind === "choice") {
    for (const m of pending.moves) {
      const b = document.createElement("button");
      b.textContent = m.move;
      b.onclick = () => play(m.move);
      box.appendChild(b);
    }
  }
}

function drawBoard() {
  const svg = $("board");
  const { layer, at, byName } = drawCells(svg, view.game, view.board, view.cells, view.last);
  if (pending && pending.picked) {
    const c = byName.get(pending.picked);
    if (c) { const [x, y] = at(c); el("circle", { cx: x, cy: y, r: 0.46, class: "selected" }, layer); }
  }
  // The hint's move, where it has points on the board.
  const hinted = view.hint ? (view.legal.find((m) => m.move === view.hint.move) || { points: [] }).points : [];
  for (const name of hinted) {
    const c = byName.get(name);
    if (c) { const [x, y] = at(c); el("circle", { cx: x, cy: y, r: 0.3, class: "hinted" }, layer); }
  }
  const clickable = targets();
  for (const name of clickable) {
    const c = byName.get(name);
    if (c) { const [x, y] = at(c); el("circle", { cx: x, cy: y, r: 0.16, class: "target" }, layer); }
  }
  // Transparent hit areas on top, one per point, so every click lands.
  for (const c of view.cells) {
    const [x, y] = at(c);
    const hit = el("circle", { cx: x, cy: y, r: 0.48, fill: "transparent", class: "cell", id: "pt-" + c.name,
      "data-name": c.name, "data-piece": c.piece, "data-target": clickable.has(c.name) ? "1" : "0" }, svg);
    hit.addEventListener("click", () => clickPoint(c.name));
  }
}

async function copyRecord() {
  const text = view ? view.record : "";
  try {
    await navigator.clipboard.writeText(text);
    $("message").textContent = "The game record is copied.";
  } catch {
    // Without the clipboard (a page not served over https or from
    // localhost), select it for the person to copy.
    $("record").focus();
    $("record").select();
    $("message").textContent = "Copy the selected record.";
  }
}

function setStrength() {
  const v = $("strength").value;
  const body = v[0] === "s" ? { seconds: Number(v.slice(1)) } : { playouts: Number(v.slice(1)) };
  call("POST", "api/strength", body);
}

// boot learns from page.json who answers the page's requests, starts the
// page's own engine if it has one, and shows the game.
async function boot() {
  const say = (text) => { $("status").textContent = text; };
  document.body.dataset.ready = "loading";
  if (location.protocol === "file:") {
    fail("This page plays from a web server, not from a file: in its folder run python3 -m http.server and open http://localhost:8000/.");
    return;
  }
  let page;
  try {
    const res = await fetch("page.json");
    if (!res.ok) throw new Error("page.json: " + res.status + " " + res.statusText);
    page = await res.json();
  } catch (err) {
    fail("The page could not learn who plays: " + err.message);
    return;
  }
  if (page.engine === "page") {
    try {
      const engine = await import("./engine.js");
      transport = await engine.start(page, say);
    } catch (err) {
      fail("The bot could not be loaded: " + (err && err.message ? err.message : err));
      return;
    }
  } else {
    transport = serverTransport;
  }
  // Tests and the curious reach the transport here.
  window.flipzeroTransport = transport;
  document.body.dataset.engine = transport.engine;
  await call("GET", "api/state");
  document.body.dataset.ready = view ? "true" : "failed";
}

function fail(text) {
  $("status").textContent = text;
  $("status").classList.add("failed");
  document.body.dataset.ready = "failed";
  document.body.dataset.busy = "false";
}

$("pass").onclick = () => play("pass");
$("hint").onclick = () => { if (!busy) call("POST", "api/hint"); };
$("bot").onclick = () => { if (!busy) call("POST", "api/bot"); };
$("undo").onclick = () => { if (!busy) call("POST", "api/undo"); };
$("new").onclick = () => { if (!busy) call("POST", "api/new", { as: $("side").value }); };
$("strength").onchange = () => {
  if (!busy) setStrength();
  else $("strength").value = $("strength").dataset.current;
};
$("show-top").onchange = () => render();
$("copy").onclick = copyRecord;
$("load").onclick = () => { if (!busy) call("POST", "api/load", { record: $("record").value, as: $("side").value }); };
boot();
