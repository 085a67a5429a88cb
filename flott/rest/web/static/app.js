// flott's dashboard: hash routes (#/overview, #/jobs/running, #/job/<id>/<tab>, #/taskmanagers,
// #/taskmanager/<id>, #/jobmanager), each page rendered from flott's REST routes and refreshed
// every 2 seconds while it is shown. No framework, no build step.

import { TERMINAL, del, esc, fmtBytes, fmtDuration, fmtNum, fmtTime, get, getText, patch, post, state } from "./api.js";
import { renderDag } from "./dag.js";

const REFRESH_MS = 2000;
const main = document.getElementById("main");
let timer = null;
let generation = 0;
const previous = new Map(); // vertex id → {t, in, out}: records/s between two looks
let armed = null; // "<action>:<job>" whose button was clicked once (a second click confirms)
const operations = new Map(); // job id → {text, cls}: the last savepoint / stop / rescale and how it went
let flameType = "ON_CPU"; // the flame graph's kind (Flink's ON_CPU, OFF_CPU, FULL)
const wanted = new Map(); // job id → the parallelism typed into the rescale field

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
      { label: "Input watermark", num: true }, "Started", { label: "Duration", num: true }], rows)}
    ${await flameGraphSection(id, vid)}`;
}

const FLAME_TYPES = { ON_CPU: "On-CPU", OFF_CPU: "Off-CPU", FULL: "Full" };
const FLAME_STATES = {
  "-1": "The vertex has no running subtask: nothing to sample.",
  "-2": "Flame graphs are off on this cluster: set rest.flamegraph.enabled: true.",
  "-3": "Sampling the task threads' stacks… the graph shows at the next refresh.",
};

function flameNode(node, total, depth) {
  const share = total ? node.value / total : 0;
  if (share < 0.005 || depth > 60) return "";
  const kids = (node.children ?? []).map((c) => flameNode(c, total, depth + 1)).join("");
  const label = `${node.name} (${fmtNum(node.value)} samples, ${fmtNum(share * 100)} %)`;
  // widths are set from data-share after rendering: the CSP allows no inline style attributes
  return `<div class="fg-node" data-share="${(share * 100).toFixed(3)}">
    <div class="fg-frame" title="${esc(label)}">${esc(node.name)}</div>
    <div class="fg-children">${kids}</div></div>`;
}

async function flameGraphSection(id, vid) {
  const buttons = Object.entries(FLAME_TYPES).map(([t, label]) =>
    `<button data-flame="${t}" class="${t === flameType ? "active" : ""}">${label}</button>`).join("");
  let body;
  try {
    const g = await get(`jobs/${id}/vertices/${vid}/flamegraph?type=${flameType}`);
    const ts = String(g.endTimestamp);
    if (FLAME_STATES[ts]) body = `<p class="muted" id="flame-state">${esc(FLAME_STATES[ts])}</p>`;
    else if (!g.data?.value) {
      const other = flameType === "ON_CPU" ? "Off-CPU or Full" : flameType === "OFF_CPU" ? "On-CPU or Full" : "again later";
      body = `<p class="muted" id="flame-state">No samples of this kind in the last sampling (${esc(FLAME_TYPES[flameType])}): try ${other}.</p>`;
    }
    else {
      body = `<p class="muted">Sampled ${fmtTime(g.endTimestamp)} · ${fmtNum(g.data.value)} samples · widest frames at the top are the callers</p>
        <div class="flamegraph" id="flamegraph">${flameNode(g.data, g.data.value, 0)}</div>`;
    }
  } catch (e) {
    body = `<p class="muted">${esc(e.message)}</p>`;
  }
  return `<h2>Flame graph</h2><div class="toolbar">${buttons}</div>${body}`;
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
  const running = job.state === "RUNNING";
  const parallelism = Math.max(1, ...job.vertices.map((v) => v.parallelism));
  const op = operations.get(id);
  const confirm = (action, label, confirmLabel) => (armed === `${action}:${id}` ? confirmLabel : label);
  return `<div class="jobhead">
      <h1 id="job-name">${esc(job.name)}</h1>
      <span id="job-state">${state(job.state)}</span>
      <span class="meta">${esc(job.jid)} · started ${fmtTime(job["start-time"])} · ${fmtDuration(job.duration)} ·
        restarts: <span id="job-restarts">${esc(restarts)}</span></span>
      ${running ? `<span class="actions">
        <button id="savepoint-job" data-job="${esc(id)}" data-action="savepoint">Savepoint</button>
        <button id="stop-job" data-job="${esc(id)}" data-action="stop">${confirm("stop", "Stop with savepoint", "Confirm stop")}</button>
        <label>Parallelism <input type="number" id="rescale-parallelism" min="1" max="32768" value="${esc(wanted.get(id) ?? parallelism)}"></label>
        <button id="rescale-job" data-job="${esc(id)}" data-action="rescale">${confirm("rescale", "Rescale", "Confirm rescale")}</button>
      </span>` : ""}
      ${cancellable ? `<button class="danger" id="cancel-job" data-job="${esc(id)}" data-action="cancel">${confirm("cancel", "Cancel job", "Confirm cancel")}</button>` : ""}
    </div>
    ${op ? `<p class="operation ${esc(op.cls)}" id="job-operation">${esc(op.text)}</p>` : ""}
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

// -- submitting a Python program (Flink's /jars routes) ---------------------------------------

let submitMessage = null; // {text, cls}: how the last upload or run went

async function submitPage() {
  let programs;
  try { programs = await get("jars"); } catch (e) {
    return `<h1>Submit a job</h1><p class="muted" id="submit-off">${esc(e.message)}</p>`;
  }
  const rows = programs.files.map((f) => [
    td(esc(f.name)), td(fmtTime(f.uploaded)),
    td(`<button data-jar-run="${esc(f.id)}">Run</button> <button class="danger" data-jar-delete="${esc(f.id)}">Delete</button>`),
  ].join(""));
  const msg = submitMessage ? `<p class="operation ${esc(submitMessage.cls)}" id="submit-message">${esc(submitMessage.text)}</p>` : "";
  return `<h1>Submit a job</h1>
    <p class="muted">A Python program (a <code>.py</code> script, or a <code>.zip</code> of modules with an entry
      module) is planned in a child process of the JobManager and runs as a job.</p>
    <div class="toolbar"><input type="file" id="program-file" accept=".py,.zip">
      <button id="upload-program">Upload</button></div>
    ${msg}
    <h2>Uploaded programs</h2>
    <div class="toolbar">
      <label>Entry module <input type="text" id="entry-module" placeholder="for a .zip: package.module"></label>
      <label>Parallelism <input type="number" id="run-parallelism" min="1" max="32768" placeholder="default"></label>
      <label>Arguments <input type="text" id="program-args" placeholder="--input /data/in.txt"></label>
      <label>Savepoint <input type="text" id="savepoint-path" placeholder="resume from (optional)"></label>
    </div>
    ${table(["Program", "Uploaded", ""], rows, "No program uploaded yet.")}`;
}

async function uploadProgram() {
  const file = document.getElementById("program-file")?.files?.[0];
  if (!file) { submitMessage = { text: "Choose a .py or .zip file first.", cls: "failed" }; return; }
  const form = new FormData();
  form.append("jarfile", file, file.name);
  await post("jars/upload", form);
  submitMessage = { text: `Uploaded ${file.name}.`, cls: "completed" };
}

async function runProgram(jarId) {
  const value = (id) => document.getElementById(id)?.value.trim() ?? "";
  const body = {};
  if (value("entry-module")) body.entryClass = value("entry-module");
  if (value("run-parallelism")) body.parallelism = Number(value("run-parallelism"));
  if (value("program-args")) body.programArgsList = value("program-args").split(/\s+/);
  if (value("savepoint-path")) body.savepointPath = value("savepoint-path");
  submitMessage = { text: "Planning the program…", cls: "pending" };
  show(false);
  const { jobid } = await post(`jars/${jarId}/run`, body);
  submitMessage = null;
  location.hash = `#/job/${jobid}/overview`;
}

// -- job operations ---------------------------------------------------------------------------

const CONFIRMED = new Set(["cancel", "stop", "rescale"]); // these end or restart the job: two clicks

async function jobAction(button, action, job) {
  const key = `${action}:${job}`;
  if (CONFIRMED.has(action) && armed !== key) { // a second click within 5 s confirms
    armed = key;
    button.textContent = `Confirm ${action}`;
    setTimeout(() => { if (armed === key) { armed = null; show(false); } }, 5000);
    return;
  }
  armed = null;
  button.disabled = true;
  try {
    if (action === "cancel") await patch(`jobs/${job}?mode=cancel`);
    else if (action === "savepoint") await follow(job, "Savepoint", "savepoints", await post(`jobs/${job}/savepoints`, { "cancel-job": false }));
    else if (action === "stop") await follow(job, "Stop with savepoint", "savepoints", await post(`jobs/${job}/stop`, { drain: false }));
    else if (action === "rescale") {
      const n = Number(document.getElementById("rescale-parallelism")?.value);
      if (!Number.isInteger(n) || n < 1) throw new Error("The parallelism must be a whole number of at least 1.");
      await follow(job, `Rescale to ${n}`, "rescaling", await patch(`jobs/${job}/rescaling?parallelism=${n}`));
    }
  } catch (e) {
    operations.set(job, { text: `${action}: ${e.message}`, cls: "failed" });
  }
  show(false);
}

function failureText(cause) {
  const trace = cause?.["stack-trace"] ?? cause?.class ?? "unknown cause";
  return String(trace).split("\n")[0];
}

/** Polls an asynchronous operation's status URL until it completes; its outcome stays on the job's page. */
async function follow(job, label, kind, trigger) {
  const rid = trigger["request-id"];
  operations.set(job, { text: `${label}: in progress…`, cls: "pending" });
  show(false);
  for (let delay = 200; ; delay = Math.min(delay * 2, 2000)) {
    await new Promise((r) => setTimeout(r, delay));
    const s = await get(`jobs/${job}/${kind}/${rid}`);
    if (s.status?.id !== "COMPLETED") continue;
    const o = s.operation ?? {};
    operations.set(job, o["failure-cause"]
      ? { text: `${label} failed: ${failureText(o["failure-cause"])}`, cls: "failed" }
      : { text: `${label} completed${o.location ? `: ${o.location}` : "."}`, cls: "completed" });
    return;
  }
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
  if (page === "submit") return { nav: "submit", live: false, render: submitPage };
  return { nav: "overview", live: true, render: overviewPage };
}

async function show(first) {
  const r = route();
  const typing = document.activeElement;
  if (!first && typing?.tagName === "INPUT" && main.contains(typing)) { // never under the user's cursor
    clearTimeout(timer);
    if (r.live) timer = setTimeout(() => show(false), REFRESH_MS);
    return;
  }
  const mine = ++generation;
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
  main.querySelectorAll(".fg-node[data-share]").forEach((n) => { n.style.flex = `0 0 ${n.dataset.share}%`; });
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
  const flame = ev.target.closest("[data-flame]");
  if (flame) {
    flameType = flame.dataset.flame;
    show(false);
    return;
  }
  const jar = ev.target.closest("#upload-program, [data-jar-run], [data-jar-delete]");
  if (jar) {
    jar.disabled = true;
    try {
      if (jar.id === "upload-program") await uploadProgram();
      else if (jar.dataset.jarRun) { await runProgram(jar.dataset.jarRun); return; }
      else { await del(`jars/${jar.dataset.jarDelete}`); submitMessage = { text: "Deleted.", cls: "completed" }; }
    } catch (e) {
      submitMessage = { text: e.message, cls: "failed" };
    }
    show(false);
    return;
  }
  const target = ev.target.closest("[data-log], [data-action]");
  if (!target) return;
  ev.preventDefault();
  if (target.dataset.action) {
    await jobAction(target, target.dataset.action, target.dataset.job);
    return;
  }
  const view = document.getElementById("log-view");
  view.hidden = false;
  view.textContent = "Loading…";
  try { view.textContent = await getText(target.dataset.log); } catch (e) { view.textContent = e.message; }
  view.scrollTop = view.scrollHeight;
});

main.addEventListener("input", (ev) => {
  if (ev.target.id === "rescale-parallelism") wanted.set(location.hash.split("/")[2], ev.target.value);
});

window.addEventListener("hashchange", () => { previous.clear(); show(true); });
get("config").then((c) => { document.getElementById("version").textContent = `${c["flink-revision"]} · REST API v1`; }).catch(() => {});
show(true);
