// REST calls and formatting shared by the dashboard's pages. Every URL is relative to the
// page, so the dashboard works behind a path prefix (a proxy serving it at /flink/).

export class RestError extends Error {}

// With REST authentication on, the cluster answers 401; the page then asks for a token once, keeps it
// for this tab only (sessionStorage, never a cookie, so other sites cannot send it) and sends it as a
// bearer token with every call.
const TOKEN_KEY = "flott.rest.token";

async function call(method, path, accept, retried = false, payload = undefined) {
  const headers = { Accept: accept };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers, cache: "no-store" };
  if (payload instanceof FormData) {
    init.body = payload; // multipart: the browser writes the boundary
  } else if (payload !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(payload);
  }
  const r = await fetch(path, init);
  if (r.status === 401 && !retried) {
    const given = window.prompt("This cluster needs a REST token (read-only or operator):");
    if (given) {
      sessionStorage.setItem(TOKEN_KEY, given.trim());
      return call(method, path, accept, true, payload);
    }
  }
  if (accept === "text/plain" && r.ok) return r.text();
  let body = null;
  try { body = await r.json(); } catch { body = null; }
  if (!r.ok) {
    const why = body && Array.isArray(body.errors) ? body.errors.join("; ") : `HTTP ${r.status}`;
    throw new RestError(why);
  }
  return body;
}

export const get = (path) => call("GET", path, "application/json");
export const getText = (path) => call("GET", path, "text/plain");
export const patch = (path) => call("PATCH", path, "application/json");
export const post = (path, body) => call("POST", path, "application/json", false, body ?? {});
export const del = (path) => call("DELETE", path, "application/json");

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
/** Text for HTML: everything the cluster sends (job names, exceptions, logs) goes through here. */
export function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

export function fmtNum(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return "–";
  return Number(n).toLocaleString("en-US", { maximumFractionDigits: 1 });
}

export function fmtBytes(n) {
  if (!(n >= 0)) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

export function fmtDuration(ms) {
  if (!(ms >= 0)) return "–";
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  if (h) return `${h}h ${m}m ${sec}s`;
  if (m) return `${m}m ${sec}s`;
  return ms < 1000 ? `${ms} ms` : `${sec}s`;
}

export function fmtTime(ts) {
  if (!(ts > 0)) return "–";
  const d = new Date(ts);
  const pad = (x) => String(x).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function state(s) {
  return `<span class="state state-${esc(s)}">${esc(s)}</span>`;
}

export const TERMINAL = new Set(["FINISHED", "FAILED", "CANCELED"]);
