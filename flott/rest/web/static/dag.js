// The job graph as a left-to-right DAG in SVG, from /jobs/:id/plan (nodes and their inputs)
// and /jobs/:id (each vertex's status, parallelism and record counts).

import { esc, fmtNum } from "./api.js";

const W = 250, H = 92, GAP_X = 90, GAP_Y = 36, PAD = 24;

/** Column of each node: the longest path from a source to it. */
function layers(nodes) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depth = new Map();
  const visit = (id, seen) => {
    if (depth.has(id)) return depth.get(id);
    if (seen.has(id)) return 0; // a cycle cannot happen in a JobGraph; do not loop if it did
    seen.add(id);
    const node = byId.get(id);
    const ins = (node?.inputs ?? []).filter((i) => byId.has(i.id));
    const d = ins.length ? 1 + Math.max(...ins.map((i) => visit(i.id, seen))) : 0;
    depth.set(id, d);
    return d;
  };
  nodes.forEach((n) => visit(n.id, new Set()));
  return depth;
}

function shorten(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function renderDag(plan, vertices) {
  const nodes = plan.nodes ?? [];
  const info = new Map((vertices ?? []).map((v) => [v.id, v]));
  const depth = layers(nodes);
  const columns = [];
  nodes.forEach((n) => {
    const d = depth.get(n.id) ?? 0;
    (columns[d] ??= []).push(n);
  });
  const pos = new Map();
  const rows = Math.max(1, ...columns.map((c) => c?.length ?? 0));
  columns.forEach((col, x) => {
    const offset = ((rows - col.length) * (H + GAP_Y)) / 2;
    col.forEach((n, y) => pos.set(n.id, { x: PAD + x * (W + GAP_X), y: PAD + offset + y * (H + GAP_Y) }));
  });
  const width = PAD * 2 + Math.max(1, columns.length) * (W + GAP_X) - GAP_X;
  const height = PAD * 2 + rows * (H + GAP_Y) - GAP_Y;
  const edges = [];
  nodes.forEach((n) => (n.inputs ?? []).forEach((input) => {
    const from = pos.get(input.id), to = pos.get(n.id);
    if (!from || !to) return;
    const x1 = from.x + W, y1 = from.y + H / 2, x2 = to.x - 6, y2 = to.y + H / 2;
    const mx = (x1 + x2) / 2;
    edges.push(
      `<path class="edge" d="M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}" marker-end="url(#arrow)"/>` +
      `<text class="edge-label" x="${mx}" y="${(y1 + y2) / 2 - 6}" text-anchor="middle">${esc(input.ship_strategy)}</text>`,
    );
  }));
  const boxes = nodes.map((n) => {
    const p = pos.get(n.id), v = info.get(n.id) ?? {};
    const m = v.metrics ?? {};
    const status = v.status ?? "CREATED";
    const name = v.name ?? n.description ?? n.id;
    return `<g class="node status-${esc(status)}" data-vertex="${esc(n.id)}" transform="translate(${p.x},${p.y})">
      <title>${esc(n.description || name)}</title>
      <rect width="${W}" height="${H}" rx="8"/>
      <text class="title" x="12" y="22">${esc(shorten(name, 32))}</text>
      <text class="line" x="12" y="42">${esc(status)} · parallelism ${esc(n.parallelism)}</text>
      <text class="line" x="12" y="60">records in: <tspan class="records-in">${fmtNum(m["read-records"])}</tspan></text>
      <text class="line" x="12" y="78">records out: <tspan class="records-out">${fmtNum(m["write-records"])}</tspan></text>
    </g>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="job graph">
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
      <path class="arrow" d="M 0 0 L 10 5 L 0 10 z"/></marker></defs>
    ${edges.join("\n")}
    ${boxes.join("\n")}
  </svg>`;
}
