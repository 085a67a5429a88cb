// flott's dashboard: hash routes (#/overview, #/jobs/running, #/job/<id>/<tab>, #/taskmanagers,
// #/taskmanager/<id>, #/jobmanager), each page rendered from flott's REST routes and refreshed
// every 2 seconds while it is shown. No framework, no build step.

import { TERMINAL, esc, fmtBytes, fmtDuration, fmtNum, fmtTime, get, getText, patch, state } from "./api.js";
import { renderDag } from "./dag.js";

const REFRESH_MS = 2000;
const main = document.getElementById("main");
let timer = null;
let generation = 0;
const previous = new Map(); // vertex id → {t, in, out}: records/s between two looks
let armed = null; // the job whose cancel button was clicked once (a second click confirms)

function table(headers, rows, empty = "Nothing here.") {
  if (!rows.length) return `<p class="muted">${esc(empty)}</p>`;
  const th = headers.map((h) => `<th class="${h.num ? "num" : ""}">${esc(h.label ?? h)}</th>`).join("");
  return `<table><thead><tr>${th}</tr></thead><tbody>${rows.map((r) => `<tr>${r}</tr>`).join("")}</tbody></table>`;
}

const num = (v) => `<td class="num">${v}</td>`;
const td = (v) => `<td>${v}</td>`;

function card(label, value, id) {
  const small = String(value ?? "").length > 14 ? " small" : "";
  return `<div class="card"><div class="label">${esc(label)}</div><div class="value${small}"${id ? ` id="${id}"` : ""}>${esc(value)}</div></div>`;
}

// -- pages ------------------------------------------------------------------------------------

function jobRows(jobs) {
  return jobs.map((j) => [
    td(`<a href="#/job/${esc(j.jid)}/overview" class="job-link">${esc(j.name)}</a>`),
    td(fmtTime(j["start-time"])),
    num(fmtDuration(j.duration)),
    num(`${fmtNum(j.tasks?.running ?? 0)} / ${fmtNum(j.tasks?.total ?? 0)}`),
    td(state(j.state)),
  ].join(""));
}

const JOB_HEADERS = ["Job name", "Start time", { label: "Duration", num: true }, { label: "Tasks running", num: true }, "Status"];

async function overviewPage() {
  const [o, jobs] = await Promise.all([get("overview"), get("jobs/overview")]);
  const running = jobs.jobs.filter((j) => !TERMINAL.has(j.state));
  return `<h1>Cluster overview</h1>
    <div class="cards">
      ${card("Task managers", o.taskmanagers, "tm-count")}
      ${card("Task slots", `${o["slots-available"]} free / ${o["slots-total"]}`)}
      ${card("Running jobs", o["jobs-running"], "jobs-running")}
      ${card("Finished", o["jobs-finished"])}
      ${card("Canceled", o["jobs-cancelled"])}
      ${card("Failed", o["jobs-failed"])}
    </div>
    <h2>Running jobs</h2>
    ${table(JOB_HEADERS, jobRows(running), "No job is running.")}`;
}

async function jobsPage(which) {
  const jobs = (await get("jobs/overview")).jobs
    .filter((j) => (which === "running" ? !TERMINAL.has(j.state) : TERMINAL.has(j.state)))
    .sort((a, b) => b["start-time"] - a["start-time"]);
  const title = which === "running" ? "Running jobs" : "Completed jobs";
  return `<h1>${title}</h1>${table(JOB_HEADERS, jobRows(jobs), which === "running" ? "No job is running." : "No job has ended yet.")}`;
}

function rate(vertexId, m) {
  const now = performance.now();
  const before = previous.get(vertexId);
  const value = { t: now, in: m["read-records"] ?? 0, out: m["write-records"] ?? 0 };
  previous.set(vertexId, value);
  if (!before || now - before.t < 500) return "–";
  const dt = (now - before.t) / 1000;
  return `${fmtNum((value.in - before.in) / dt)} / ${fmtNum((value.out - before.out) / dt)}`;
}

async function jobOverviewTab(id, job) {
  const { plan } = await get(`jobs/${id}/plan`);
  const rows = job.vertices.map((v) => [
    td(`<a href="#/job/${esc(id)}/vertex/${esc(v.id)}" class="vertex-link">${esc(v.name)}</a>`),
    td(state(v.status)),
    num(fmtNum(v.parallelism)),
    num(`<span class="records-in">${fmtNum(v.metrics["read-records"])}</span>`),
    num(`<span class="records-out">${fmtNum(v.metrics["write-records"])}</span>`),
    num(v.status === "RUNNING" ? rate(v.id, v.metrics) : "–"),
    num(fmtDuration(v.duration)),
  ].join(""));
  return `<div class="dag">${renderDag(plan, job.vertices)}</div>
    <h2>Vertices</h2>
    ${table(["Name", "Status", { label: "Parallelism", num: true }, { label: "Records received", num: true },
      { label: "Records sent", num: true }, { label: "Records/s in / out", num: true }, { label: "Duration", num: true }], rows)}`;
}

function exceptionBlock(e, key) {
  const where = e.taskName ? `${esc(e.taskName)} on ${esc(e.endpoint ?? "?")} (${esc(e.taskManagerId ?? "")})` : "global failure";
  const concurrent = (e.concurrentExceptions ?? []).map((c) =>
    `<li>${esc(c.exceptionName)} in ${esc(c.taskName ?? "?")} on ${esc(c.endpoint ?? "?")}</li>`).join("");
  return `<details class="exception" data-key="${esc(key)}">
    <summary><strong>${esc(e.exceptionName)}</strong> · ${fmtTime(e.timestamp)} · ${where}</summary>
    <pre>${esc(e.stacktrace)}</pre>
    ${concurrent ? `<p>Concurrent exceptions:</p><ul>${concurrent}</ul>` : ""}
  </details>`;
}

async function jobExceptionsTab(id) {
  const { exceptionHistory: h } = await get(`jobs/${id}/exceptions`);
  if (!h.entries.length) return `<p class="muted">No exceptions: the job has not failed or restarted.</p>`;
  return h.entries.map((e, i) => exceptionBlock(e, `${e.timestamp}-${i}`)).join("") +
    (h.truncated ? `<p class="muted">Older entries are not shown.</p>` : "");
}

async function jobCheckpointsTab(id) {
  let stats;
  try { stats = await get(`jobs/${id}/checkpoints`); } catch (e) { return `<p class="muted">${esc(e.message)}</p>`; }
  const c = stats.counts ?? {};
  const latest = stats.latest?.completed;
  const rows = (stats.history ?? []).map((h) => [
    num(esc(h.id)), td(state(h.status)), td(fmtTime(h.trigger_timestamp)),
    num(fmtDuration(h.end_to_end_duration)), num(fmtBytes(h.state_size ?? h.checkpointed_size)),
    num(`${esc(h.num_acknowledged_subtasks)} / ${esc(h.num_subtasks)}`),
  ].join(""));
  return `<div class="cards">
      ${card("Completed", c.completed ?? 0, "checkpoints-completed")}${card("In progress", c.in_progress ?? 0)}
      ${card("Failed", c.failed ?? 0)}${card("Restored", c.restored ?? 0)}
      ${card("Latest", latest ? `#${latest.id}` : "–")}</div>
    <h2>History</h2>
    ${table([{ label: "ID", num: true }, "Status", "Triggered", { label: "Duration", num: true },
      { label: "Size", num: true }, { label: "Acknowledged", num: true }], rows, "No checkpoint yet.")}`;
}

async function jobConfigTab(id) {
  const cfg = await get(`jobs/${id}/config`);
  const ec = cfg["execution-config"] ?? {};
  const rows = Object.entries(ec["user-config"] ?? {}).sort().map(([k, v]) => td(esc(k)) + td(esc(v)));
  return `<p>Restart strategy: <strong id="restart-strategy">${esc(ec["restart-strategy"])}</strong> ·
    parallelism ${esc(ec["job-parallelism"])}</p>${table(["Key", "Value"], rows, "No job configuration.")}`;
}

const SHARES = ["busyTimeMsPerSecond", "idleTimeMsPerSecond", "backPressuredTimeMsPerSecond"];
const NO_WATERMARK = "-9223372036854775808";

function share(ms) {
  return ms === undefined ? "–" : `${fmtNum(Number(ms) / 10)} %`;
}

function watermark(value) {
  if (value === undefined) return "–";
  return value === NO_WATERMARK ? "No watermark" : esc(value);
}

async function vertexTab(id, vid) {
  const [v, bp, marks] = await Promise.all([
    get(`jobs/${id}/vertices/${vid}`),
    get(`jobs/${id}/vertices/${vid}/subtasks/metrics?get=busyTimeMsPerSecond,backPressuredTimeMsPerSecond&agg=max`).catch(() => []),
    get(`jobs/${id}/vertices/${vid}/watermarks`).catch(() => []),
  ]);
  const max = Object.fromEntries(bp.map((m) => [m.id, m.max]));
  const ids = v.subtasks.flatMap((t) => SHARES.map((n) => `${t.subtask}.${n}`));
  const shares = ids.length
    ? Object.fromEntries((await get(`jobs/${id}/vertices/${vid}/metrics?get=${ids.join(",")}`).catch(() => []))
      .map((m) => [m.id, m.value]))
    : {};
  const wm = Object.fromEntries(marks.map((m) => [m.id, m.value]));
  const rows = v.subtasks.map((t) => [
    num(esc(t.subtask)), td(state(t.status)), num(`<span class="attempt">${esc(t.attempt)}</span>`),
    td(esc(t.endpoint)), num(fmtNum(t.metrics?.["read-records"])), num(fmtNum(t.metrics?.["write-records"])),
    ...SHARES.map((n) => num(`<span class="share share-${n}">${share(shares[`${t.subtask}.${n}`])}</span>`)),
    num(`<span class="watermark">${watermark(wm[`${t.subtask}.currentInputWatermark`])}</span>`),
    td(fmtTime(t["start-time"])), num(fmtDuration(t.duration)),
  ].join(""));
  return `<h2><a href="#/job/${esc(id)}/overview">Overview</a> › ${esc(v.name)}</h2>
    <div class="cards">${card("Parallelism", v.parallelism)}${card("Max parallelism", v.maxParallelism)}
      ${card("Busy (max)", max.busyTimeMsPerSecond !== undefined ? `${fmtNum(max.busyTimeMsPerSecond / 10)} %` : "–")}
      ${card("Back-pressured (max)", max.backPressuredTimeMsPerSecond !== undefined ? `${fmtNum(max.backPressuredTimeMsPerSecond / 10)} %` : "–")}</div>
    <h2>Subtasks</h2>
    ${table([{ label: "#", num: true }, "Status", { label: "Attempt", num: true }, "Task manager",
      { label: "Records received", num: true }, { label: "Records sent", num: true },
      { label: "Busy", num: true }, { label: "Idle", num: true }, { label: "Back-pressured", num: true },
      { label: "Input watermark", num: true }, "Started", { label: "Duration", num: true }], rows)}`;
}

const LOG_LINES = 500;

function logLine(l) {
  if (l.kind === "status" || l.kind === "truncated") {
    return `<span class="log-${esc(l.kind)}" data-status="${esc(l.status ?? "")}">== ${esc(l.text)}</span>`;
  }
  const mark = l.kind === "stderr" ? "!" : "|";
  return `<span class="log-${esc(l.kind)}"><span class="log-task">${esc(l.task)} #${esc(l.attempt)}</span> ${mark} ${esc(l.text)}</span>`;
}

// The job's own log (GET /jobs/:id/logs): its tasks' output and its status changes, kept after the
// job ended; the last LOG_LINES lines, refreshed with the page.
async function jobLogsTab(id) {
  const page = await get(`jobs/${id}/logs?from=-${LOG_LINES}&max=${LOG_LINES}`);
  if (!page.lines.length) return `<p class="muted" id="job-log-empty">The job has written nothing yet.</p>`;
  const range = page.from > 0 ? `lines ${fmtNum(page.from + 1)}–${fmtNum(page.next)} (older ones: <code>flott logs ${esc(id)}</code>)` : `${fmtNum(page.next)} lines`;
  return `<p class="muted" id="job-log-range">${range}${page.complete ? " · complete: the job has ended" : ""}</p>
    <pre class="log" id="job-log">${page.lines.map(logLine).join("\n")}</pre>`;
}

const JOB_TABS = { overview: "Overview", exceptions: "Exceptions", checkpoints: "Checkpoints", config: "Configuration", logs: "Logs" };

async function jobPage(id, tab, vertex) {
  const [job, metrics] = await Promise.all([get(`jobs/${id}`), get(`jobs/${id}/metrics?get=numRestarts`).catch(() => [])]);
  const restarts = metrics.find((m) => m.id === "numRestarts")?.value ?? "–";
  const tabs = Object.entries(JOB_TABS).map(([t, label]) =>
    `<a href="#/job/${esc(id)}/${t}" class="${t === tab ? "active" : ""}" data-tab="${t}">${label}</a>`).join("");
  const body = vertex ? await vertexTab(id, vertex)
    : tab === "exceptions" ? await jobExceptionsTab(id)
    : tab === "checkpoints" ? await jobCheckpointsTab(id)
      : tab === "config" ? await jobConfigTab(id)
        : tab === "logs" ? await jobLogsTab(id)
          : await jobOverviewTab(id, job);
  const cancellable = !TERMINAL.has(job.state) && job.state !== "CANCELLING";
  return `<div class="jobhead">
      <h1 id="job-name">${esc(job.name)}</h1>
      <span id="job-state">${state(job.state)}</span>
      <span class="meta">${esc(job.jid)} · started ${fmtTime(job["start-time"])} · ${fmtDuration(job.duration)} ·
        restarts: <span id="job-restarts">${esc(restarts)}</span></span>
      ${cancellable ? `<button class="danger" id="cancel-job" data-job="${esc(id)}">${armed === id ? "Confirm cancel" : "Cancel job"}</button>` : ""}
    </div>
    <nav class="tabs">${tabs}</nav>
    <section id="tab">${body}</section>`;
}

async function taskManagersPage() {
  const { taskmanagers } = await get("taskmanagers");
  const rows = taskmanagers.map((t) => [
    td(`<a href="#/taskmanager/${esc(t.id)}" class="tm-link">${esc(t.id)}</a>`), td(esc(t.path)),
    num(esc(t.dataPort)), num(`${esc(t.freeSlots)} / ${esc(t.slotsNumber)}`),
    num(esc(t.hardware?.cpuCores)), num(fmtBytes(t.hardware?.physicalMemory)), td(fmtTime(t.timeSinceLastHeartbeat)),
  ].join(""));
  return `<h1>Task managers</h1>${table(["ID", "Address", { label: "Data port", num: true }, { label: "Free slots", num: true },
    { label: "CPU cores", num: true }, { label: "Memory", num: true }, "Last heartbeat"], rows, "No task manager is registered.")}`;
}

function logsSection(base, files) {
  const rows = files.map((f) => [
    td(`<a href="#" data-log="${esc(`${base}/logs/${encodeURIComponent(f.name)}`)}">${esc(f.name)}</a>`),
    num(fmtBytes(f.size)), td(fmtTime(f.mtime)),
  ].join(""));
  return `<h2>Logs</h2>
    <div class="toolbar"><button data-log="${esc(`${base}/log`)}" id="show-log">Log</button>
      <button data-log="${esc(`${base}/stdout`)}" id="show-stdout">Stdout</button></div>
    ${table(["File", { label: "Size", num: true }, "Modified"], rows, "No log files.")}
    <pre class="log" id="log-view" hidden></pre>`;
}

async function taskManagerPage(id) {
  const [tm, logs] = await Promise.all([get(`taskmanagers/${id}`), get(`taskmanagers/${id}/logs`).catch(() => ({ logs: [] }))]);
  return `<h1>Task manager <span class="muted">${esc(tm.id)}</span></h1>
    <div class="cards">${card("Slots", `${tm.freeSlots} free / ${tm.slotsNumber}`)}${card("CPU cores", tm.hardware?.cpuCores ?? "–")}
      ${card("Memory", fmtBytes(tm.hardware?.physicalMemory))}${card("Address", tm.path)}</div>
    ${logsSection(`taskmanagers/${id}`, logs.logs)}`;
}

async function jobManagerPage() {
  const [config, logs] = await Promise.all([get("jobmanager/config"), get("jobmanager/logs")]);
  const rows = config.map((e) => td(esc(e.key)) + td(esc(e.value)));
  return `<h1>Job manager</h1>${logsSection("jobmanager", logs.logs)}
    <h2>Configuration</h2>${table(["Key", "Value"], rows)}`;
}

// -- routing and refresh ----------------------------------------------------------------------

const HEX_ID = /^[0-9a-f]{32}$/;

function badId(what, id) {
  return async () => { throw new Error(`Not a ${what} id: ${id}`); };
}

function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  const [page, a, b] = parts;
  // Ids from the address bar go into REST paths (and a cancel request): only well-formed ones.
  if ((page === "job" || page === "taskmanager") && a && !HEX_ID.test(a)) {
    return { nav: page === "job" ? "running" : "taskmanagers", live: false, render: badId(page === "job" ? "job" : "task manager", a) };
  }
  if (page === "jobs") return { nav: a === "completed" ? "completed" : "running", live: true, render: () => jobsPage(a) };
  if (page === "job" && a && b === "vertex" && HEX_ID.test(parts[3] ?? "")) {
    return { nav: "running", live: true, render: () => jobPage(a, "overview", parts[3]) };
  }
  if (page === "job" && a) return { nav: "running", live: true, render: () => jobPage(a, JOB_TABS[b] ? b : "overview") };
  if (page === "taskmanagers") return { nav: "taskmanagers", live: true, render: taskManagersPage };
  if (page === "taskmanager" && a) return { nav: "taskmanagers", live: false, render: () => taskManagerPage(a) };
  if (page === "jobmanager") return { nav: "jobmanager", live: false, render: jobManagerPage };
  return { nav: "overview", live: true, render: overviewPage };
}

async function show(first) {
  const mine = ++generation;
  const r = route();
  document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active", a.dataset.nav === r.nav));
  let html;
  try {
    html = await r.render();
  } catch (e) {
    html = `<div class="error" id="page-error">${esc(e.message)}</div>`;
  }
  if (mine !== generation) return; // the user moved on meanwhile
  const open = new Set([...main.querySelectorAll("details[open]")].map((d) => d.dataset.key));
  main.innerHTML = html;
  main.querySelectorAll("details[data-key]").forEach((d) => { if (open.has(d.dataset.key)) d.open = true; });
  document.getElementById("refresh").textContent = `updated ${new Date().toLocaleTimeString()}`;
  clearTimeout(timer);
  if (r.live) timer = setTimeout(() => show(false), REFRESH_MS);
  if (first) window.scrollTo(0, 0);
}

main.addEventListener("click", async (ev) => {
  const node = ev.target.closest("svg .node[data-vertex]");
  if (node) {
    const job = location.hash.split("/")[2];
    location.hash = `#/job/${job}/vertex/${node.dataset.vertex}`;
    return;
  }
  const target = ev.target.closest("[data-log], #cancel-job");
  if (!target) return;
  ev.preventDefault();
  if (target.id === "cancel-job") {
    const job = target.dataset.job;
    if (armed !== job) { // a second click within 5 s confirms
      armed = job;
      target.textContent = "Confirm cancel";
      setTimeout(() => { if (armed === job) { armed = null; show(false); } }, 5000);
      return;
    }
    armed = null;
    target.disabled = true;
    try { await patch(`jobs/${job}?mode=cancel`); } catch (e) { alert(e.message); }
    show(false);
    return;
  }
  const view = document.getElementById("log-view");
  view.hidden = false;
  view.textContent = "Loading…";
  try { view.textContent = await getText(target.dataset.log); } catch (e) { view.textContent = e.message; }
  view.scrollTop = view.scrollHeight;
});

window.addEventListener("hashchange", () => { previous.clear(); show(true); });
get("config").then((c) => { document.getElementById("version").textContent = `${c["flink-revision"]} · REST API v1`; }).catch(() => {});
show(true);
