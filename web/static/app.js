// The page of "flipzero serve": it draws the game the server sends as
// JSON (with board.js) and turns clicks into moves. The server knows the
// rules; the page only picks among the legal moves it lists.
"use strict";

let view = null;
// pending is a decision under way: a ring picked to move, or the rows that
// contain the markers clicked so far.
let pending = null;
let busy = false;

const $ = (id) => document.getElementById(id);

async function call(method, path, body) {
  busy = true;
  $("message").textContent = "";
  if (method === "POST") $("status").textContent = "flipzero is thinking…";
  try {
    const res = await fetch(path, {
      method,
      headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = await res.json();
    if (!res.ok) {
      $("message").textContent = data.error || res.statusText;
      render();
      return;
    }
    view = data;
    pending = null;
    render();
  } catch (err) {
    $("message").textContent = "The server did not answer: " + err;
  } finally {
    busy = false;
    document.body.dataset.busy = "false";
  }
}

function play(move) {
  if (busy) return;
  document.body.dataset.busy = "true";
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
  // A one-player game's evaluations are the final scores they expect.
  const evals = view.replies.map((r) => r.move + (r.expected != null
    ? " (expects a score of " + r.expected.toFixed(1) + ", " + r.playouts + " playouts)"
    : " (eval " + signed(r.value) + " for flipzero, " + r.playouts + " playouts)"));
  $("evaluation").textContent = evals.length ? "flipzero played " + evals.join(", then ") : "";
  if (view.hint) {
    $("message").textContent = "Hint: " + view.hint.move + (view.hint.expected != null
      ? " (expects a score of " + view.hint.expected.toFixed(1) + ")"
      : " (eval " + signed(view.hint.value) + " for you)");
  }
  const side = $("side");
  if (!side.options.length) {
    for (const name of [...new Set([view.human, view.bot])].sort()) side.add(new Option(name, name));
    side.value = view.human;
  }
  $("side-label").hidden = view.solo;
  $("bot").hidden = !(view.solo && view.yourTurn && !view.over);
  $("pass").hidden = !(view.yourTurn && view.legal.some((m) => m.kind === "pass"));
  const hist = $("history");
  hist.replaceChildren(...view.history.map((m) => {
    const li = document.createElement("li");
    li.textContent = m;
    return li;
  }));
  hist.scrollTop = hist.scrollHeight;
  drawBoard();
  drawChoices();
}

function signed(v) {
  return (v >= 0 ? "+" : "") + v.toFixed(2);
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
  const { layer, at, byName, square } = drawCells(svg, view.game, view.board, view.cells, view.last);
  if (pending && pending.picked) {
    const c = byName.get(pending.picked);
    if (c) { const [x, y] = at(c); el("circle", { cx: x, cy: y, r: 0.46, class: "selected" }, layer); }
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

$("pass").onclick = () => play("pass");
$("hint").onclick = () => { if (!busy) call("POST", "api/hint"); };
$("bot").onclick = () => { if (!busy) call("POST", "api/bot"); };
$("undo").onclick = () => { if (!busy) call("POST", "api/undo"); };
$("new").onclick = () => { if (!busy) call("POST", "api/new", { as: $("side").value }); };
call("GET", "api/state");
