// Boards drawn as SVG from the cells a game's Display lists, shared by the
// play page and the run page's replays: squares (Othello, tic-tac-toe) or
// the points of YINSH's hexagon, with discs, marks, rings and markers, and
// the solitaire's tokens.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// drawCells draws the board of game (layout "square" or "hex") with the
// pieces on cells and the points of the last decision marked, replacing
// what svg held. It returns what a page draws on top with: the layer,
// a cell's centre, the cells by name.
function drawCells(svg, game, layout, cells, last) {
  svg.replaceChildren();
  const square = layout === "square";
  const m = 0.9;
  const layer = el("g", {}, svg);
  const at = (c) => square ? [c.x + 0.5, c.y + 0.5] : [c.x, c.y];
  const byName = new Map(cells.map((c) => [c.name, c]));
  if (!cells.length) return { layer, at, byName, square };
  const xs = cells.map((c) => c.x), ys = cells.map((c) => c.y);
  const minX = Math.min(...xs), maxX = Math.max(...xs) + (square ? 1 : 0);
  const minY = Math.min(...ys), maxY = Math.max(...ys) + (square ? 1 : 0);
  svg.setAttribute("viewBox", [minX - m, minY - m, maxX - minX + 2 * m, maxY - minY + 2 * m].join(" "));
  if (square) {
    const othello = game !== "tictactoe";
    el("rect", { x: minX, y: minY, width: maxX - minX, height: maxY - minY, fill: othello ? "#2e7d4f" : "#fffdf5" }, layer);
    for (const c of cells) {
      el("rect", { x: c.x, y: c.y, width: 1, height: 1, fill: "none", stroke: othello ? "#163d26" : "#333", "stroke-width": 0.03 }, layer);
    }
    for (const c of cells) {
      if (c.y === minY) label(layer, c.x + 0.5, minY - 0.4, c.name.replace(/[0-9]+$/, ""));
      if (c.x === minX) label(layer, minX - 0.4, c.y + 0.5, c.name.replace(/^[a-z]+/, ""));
    }
  } else {
    el("rect", { x: minX - m, y: minY - m, width: maxX - minX + 2 * m, height: maxY - minY + 2 * m, fill: "#f0e2c0" }, layer);
    for (const c of cells) {
      for (const [dc, dr] of [[0, 1], [1, 0], [1, 1]]) {
        const n = cells.find((o) => o.col === c.col + dc && o.row === c.row + dr);
        if (n) el("line", { x1: c.x, y1: c.y, x2: n.x, y2: n.y, stroke: "#8a7650", "stroke-width": 0.03 }, layer);
      }
      el("circle", { cx: c.x, cy: c.y, r: 0.05, fill: "#8a7650" }, layer);
    }
    const lowest = new Map(), leftmost = new Map();
    for (const c of cells) {
      if (!lowest.has(c.col) || c.y > lowest.get(c.col).y) lowest.set(c.col, c);
      if (!leftmost.has(c.row) || c.x < leftmost.get(c.row).x) leftmost.set(c.row, c);
    }
    for (const c of lowest.values()) label(layer, c.x, c.y + 0.6, c.name[0]);
    for (const c of leftmost.values()) label(layer, c.x - 0.55, c.y - 0.25, String(c.row));
  }
  for (const name of last || []) {
    const c = byName.get(name);
    if (c) { const [x, y] = at(c); el("circle", { cx: x, cy: y, r: square ? 0.47 : 0.44, class: "last" }, layer); }
  }
  for (const c of cells) drawPiece(layer, game, c, at(c));
  return { layer, at, byName, square };
}

function label(parent, x, y, text) {
  const t = el("text", { x, y, class: "label" }, parent);
  t.textContent = text;
}

function drawPiece(parent, game, c, [x, y]) {
  const p = c.piece;
  if (!p) return;
  if (game === "tictactoe") {
    const t = el("text", { x, y: y + 0.04, "text-anchor": "middle", "dominant-baseline": "middle", "font-size": 0.8,
      fill: p === "black" ? "#1a3c8c" : "#b3261e", "pointer-events": "none" }, parent);
    t.textContent = p === "black" ? "X" : "O";
    return;
  }
  const dark = p.startsWith("black");
  if (p === "black" || p === "white") {
    el("circle", { cx: x, cy: y, r: 0.42, fill: dark ? "#111" : "#f8f8f8", stroke: "#000", "stroke-width": 0.03 }, parent);
  } else if (p === "gold") {
    el("circle", { cx: x, cy: y, r: 0.42, fill: "#d4a017", stroke: "#000", "stroke-width": 0.03 }, parent);
  } else if (p.startsWith("token")) {
    drawToken(parent, p, x, y);
  } else if (p.endsWith("-ring")) {
    el("circle", { cx: x, cy: y, r: 0.36, fill: "none", stroke: "#000", "stroke-width": 0.16 }, parent);
    el("circle", { cx: x, cy: y, r: 0.36, fill: "none", stroke: dark ? "#333" : "#fafafa", "stroke-width": 0.1 }, parent);
  } else if (p.endsWith("-marker")) {
    el("circle", { cx: x, cy: y, r: 0.24, fill: dark ? "#222" : "#fafafa", stroke: "#000", "stroke-width": 0.03 }, parent);
  }
}

// drawToken draws a solitaire token: face down ("token"), turning up
// ("token-turning"), or face up showing its colour and, under sum
// scoring, its number ("token-gold-7", "token-black-blank").
function drawToken(parent, p, x, y) {
  const [, face, number] = p.split("-");
  const fill = face === "gold" ? "#d4a017" : face === "black" ? "#222" : "#a0825a";
  el("rect", { x: x - 0.32, y: y - 0.32, width: 0.64, height: 0.64, rx: 0.08, fill,
    stroke: face === "turning" ? "#fff" : "#000", "stroke-width": face === "turning" ? 0.08 : 0.03 }, parent);
  const text = face === undefined || face === "turning" ? "?" : number === undefined ? "" : number === "blank" ? "·" : number;
  if (!text) return;
  const t = el("text", { x, y: y + 0.03, "text-anchor": "middle", "dominant-baseline": "middle", "font-size": 0.36,
    fill: face === "gold" ? "#222" : "#f4f4f4", "pointer-events": "none" }, parent);
  t.textContent = text;
}
