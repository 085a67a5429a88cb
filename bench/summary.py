"""The summary table: one row per target of issue 8, from the rows the benchmarks wrote.

    python bench/summary.py ROWS.jsonl [--markdown window_bench.py=OUTPUT.md ...] [--quick]

bench/run passes ``--summary ROWS.jsonl`` to every benchmark that takes it; each appends
JSON lines (``benchlib.add_summary``: key, measure, flott, peer, per-round ratios, note).
bench/window_bench.py takes no such flag: its printed Markdown table is read instead
(``--markdown window_bench.py=FILE``, the benchmark's stdout). This prints one Markdown
table, the rows in the order of ``ROWS`` below, whether or not a benchmark reported them
(a row nobody reported says so): measure, flott, peer, ratio (median, min to max), target, met?.

A ratio is taken within a round and then summarised over rounds (median, min to max); what it
is the ratio of is in the row's measure (throughput ratios: higher is better for flott;
time and memory ratios: lower is). A target is met when the median ratio is on its side.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import markdown_table

# key, the measure's label (used when no benchmark reported the row), target (op, ratio), source
ROWS: list[tuple[str, str, tuple[str, float] | None, str]] = [
    ("wc_bare", "word count, flott p=2 vs bare loop 1 process (throughput)", (">=", 1.0), "word_count.py"),
    (
        "wc_streaming_bare",
        "word count STREAMING, flott p=2 vs bare streaming loop 1 process (throughput)",
        (">=", 1.0),
        "word_count.py",
    ),
    ("wc_bytewax", "word count, flott p=2 vs Bytewax 0.21 (throughput)", (">=", 2.0), "word_count.py"),
    ("wc_pyflink", "word count, flott p=2 vs PyFlink 2.3 (throughput)", (">=", 20.0), "word_count.py"),
    (
        "cp_start_rest",
        "control plane: cluster start → REST ready, vs Flink 2.3",
        ("<=", 0.1),
        "control_plane.py",
    ),
    (
        "cp_start_tm",
        "control plane: cluster start → first TaskManager registered, vs Flink 2.3",
        ("<=", 0.1),
        "control_plane.py",
    ),
    ("cp_cli_list", "control plane: CLI `list` wall time, vs Flink 2.3", ("<=", 0.1), "control_plane.py"),
    ("cp_cli_cancel", "control plane: CLI `cancel` wall time, vs Flink 2.3", ("<=", 0.1), "control_plane.py"),
    (
        "cp_submit_running",
        "control plane: submit → job RUNNING, vs Flink 2.3",
        ("<=", 0.5),
        "control_plane.py",
    ),
    (
        "cp_submit_tasks",
        "control plane: submit → all tasks RUNNING, vs Flink 2.3",
        ("<=", 0.5),
        "control_plane.py",
    ),
    ("rest_overview", "REST GET /overview requests/s, vs Flink 2.3", (">=", 2.0), "control_plane.py"),
    (
        "rest_jobs_overview",
        "REST GET /jobs/overview requests/s, vs Flink 2.3",
        (">=", 2.0),
        "control_plane.py",
    ),
    (
        "rest_only_overview",
        "REST GET /overview requests/s, vs Flink 2.3 (rest_bench.py --rest-only)",
        (">=", 2.0),
        "rest_bench.py",
    ),
    (
        "rest_only_jobs_overview",
        "REST GET /jobs/overview requests/s, vs Flink 2.3 (rest_bench.py --rest-only)",
        (">=", 2.0),
        "rest_bench.py",
    ),
    (
        "fo_job_running",
        "failover: SIGKILL of the leader → job RUNNING, vs Flink 2.3",
        ("<=", 0.6),
        "failover_bench.py",
    ),
    # untargeted
    (
        "cp_savepoint",
        "control plane: savepoint of small state, trigger → COMPLETED, vs Flink 2.3",
        None,
        "control_plane.py",
    ),
    ("win_bare", "windowed count, flott p=2 vs bare loop (throughput)", None, "window_bench.py"),
    (
        "win_bytewax",
        "windowed count, flott p=2 vs Bytewax 0.21, its best configuration",
        None,
        "window_bench.py",
    ),
    (
        "win_pyflink",
        "windowed count, flott p=2 vs PyFlink 2.3, its best parallelism",
        None,
        "window_bench.py",
    ),
    ("ck_every_1s", "checkpoint every 1 s vs none (throughput, STREAMING p=2)", None, "checkpoint_bench.py"),
    ("ck_savepoint", "savepoint of ~1 GB keyed state, trigger → COMPLETED", None, "checkpoint_bench.py"),
    (
        "ck_slow_map",
        "savepoint with a 50 ms-per-record map chained to the source, trigger → COMPLETED",
        None,
        "checkpoint_bench.py",
    ),
    ("rss_wc", "peak RSS during the word count, all processes", None, "word_count.py"),
    ("rss_cluster", "peak RSS, session cluster processes, vs Flink 2.3", None, "control_plane.py"),
]


@dataclass
class Row:
    key: str
    measure: str
    flott: str = ""
    peer: str = ""
    ratio: tuple[float, float, float] | None = None  # median, min, max
    rounds: int = 0
    note: str = ""
    extra: dict[str, str] = field(default_factory=dict)


def from_json(d: dict[str, object]) -> Row:
    ratios = [float(x) for x in d.get("ratios") or []]  # type: ignore[attr-defined]
    row = Row(str(d["key"]), str(d.get("measure") or ""), str(d.get("flott") or ""), str(d.get("peer") or ""))
    row.note = str(d.get("note") or "")
    if ratios:
        row.ratio = (statistics.median(ratios), min(ratios), max(ratios))
        row.rounds = len(ratios)
    return row


# --- window_bench.py's Markdown output --------------------------------------------------------
_RATIO = re.compile(r"([\d.]+)×(?:\s*\(([\d.]+)–([\d.]+)\))?")


def parse_ratio(cell: str) -> tuple[float, float, float] | None:
    """A ratio cell (benchlib.ratio_cell's format: median, then the range if any) back to numbers."""
    m = _RATIO.search(cell)
    if not m:
        return None
    med = float(m.group(1))
    if m.group(2):
        return med, float(m.group(2)), float(m.group(3))
    return med, med, med


def markdown_tables(text: str) -> list[list[dict[str, str]]]:
    """Every Markdown table in ``text``: a list of rows, each a dict header -> cell."""
    tables: list[list[dict[str, str]]] = []
    header: list[str] | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|---"):
            continue
        if header is None:
            header = cells
            tables.append([])
        else:
            tables[-1].append(dict(zip(header, cells, strict=False)))
    return tables


def window_rows(text: str) -> list[Row]:
    """The windowed-aggregation rows, from window_bench.py's table (and its notes for what is missing)."""
    measures = {k: label for k, label, _, src in ROWS if src == "window_bench.py"}
    vs_flott, vs_bare = "flott p=2 vs this (same input)", "vs bare loop (same input)"
    table = next((t for t in markdown_tables(text) if t and vs_flott in t[0] and vs_bare in t[0]), None)
    if table is None:
        why = "window_bench.py printed no table with the expected columns"
        return [Row(k, m, note=why) for k, m in measures.items()]
    notes = [line[2:] for line in text.splitlines() if line.startswith("- ")]
    by_name = {r["runner"]: r for r in table if r.get("median s") not in (None, "failed")}

    def rate(r: dict[str, str]) -> str:
        return f"{r.get('records/s (median)', '?')} records/s"

    def missing(system: str) -> str:
        said = [n for n in notes if system in n or "Peers skipped" in n]
        failed = [r["runner"] for r in table if system in r["runner"] and r.get("median s") == "failed"]
        if failed:
            return f"{failed[0]}: failed"
        return said[0] if said else f"no {system} rows in window_bench.py's table"

    out = []
    flott2 = by_name.get("flott p=2")
    bare = by_name.get("bare loop, 1 process")
    row = Row("win_bare", measures["win_bare"])
    if flott2 and bare and parse_ratio(flott2.get(vs_bare, "")):
        row.flott, row.peer = f"{rate(flott2)} (p=2)", f"{rate(bare)} (bare loop)"
        row.ratio = parse_ratio(flott2[vs_bare])
    else:
        row.note = "flott p=2 or the bare loop failed"
    out.append(row)
    for key, system in (("win_bytewax", "Bytewax"), ("win_pyflink", "PyFlink")):
        row = Row(key, measures[key])
        peers = [(r, parse_ratio(r.get(vs_flott, ""))) for n, r in by_name.items() if n.startswith(system)]
        scored = [(r, ratio) for r, ratio in peers if ratio is not None]
        ref = by_name.get("flott p=2 (PyFlink's input)") if system == "PyFlink" else None
        ref = ref or flott2
        if scored and ref:
            best, ratio = min(scored, key=lambda x: x[1][0])  # the peer's configuration that fared best
            row.flott, row.peer, row.ratio = f"{rate(ref)} (p=2)", f"{rate(best)} ({best['runner']})", ratio
            if system == "PyFlink" and best.get("input records"):
                row.measure += f", on PyFlink's {best['input records']}-record input"
        else:
            row.note = missing(system)
        out.append(row)
    return out


# --- the table ----------------------------------------------------------------------------------
def fmt_ratio(r: Row) -> str:
    if r.ratio is None:
        return "–"
    med, lo, hi = r.ratio

    def f(x: float) -> str:
        return f"{x:.2f}" if x >= 0.1 or x == 0 else f"{x:#.2g}"

    if lo == hi:
        return f"{f(med)}×"
    return f"{f(med)}× ({f(lo)}–{f(hi)})"


def verdict(r: Row, target: tuple[str, float] | None) -> str:
    if r.ratio is None:  # an untargeted row can be a figure alone (e.g. a savepoint's time)
        return "–" if target is None and r.flott and not r.note else "not measured"
    if target is None:
        return "–"
    op, value = target
    med = r.ratio[0]
    return "yes" if (med >= value if op == ">=" else med <= value) else "no"


def render(rows: dict[str, Row], quick: bool) -> str:
    lines = ["\n## Summary: flott against the targets of issue 8\n"]
    if quick:
        lines.append(
            "**--quick: tiny inputs, 1 round, slow peer runs left out; the figures below only show "
            "that the harness works, they measure nothing.**\n"
        )
    table = []
    footnotes: list[str] = []
    for key, label, target, source in ROWS:
        r = rows.get(key) or Row(key, label, note=f"bench/{source} did not report this row")
        met = verdict(r, target)
        if r.ratio is None and r.note:
            if r.note not in footnotes:
                footnotes.append(r.note)
            met += f" [{footnotes.index(r.note) + 1}]"
        target_cell = "–" if target is None else f"{'≥' if target[0] == '>=' else '≤'} {target[1]:.1f}×"
        table.append([r.measure or label, r.flott or "–", r.peer or "–", fmt_ratio(r), target_cell, met])
    lines.append(
        markdown_table(["measure", "flott", "peer", "ratio median (min–max)", "target", "met?"], table)
    )
    lines.append(
        "\nRatios are flott / peer, taken within each round (interleaved runs), median and range over "
        "the rounds: for throughput (words/s, records/s, requests/s) higher is better for flott, for "
        "times and memory lower is. The per-benchmark tables above give every figure and how it was "
        "measured."
    )
    if footnotes:
        lines.append("")
        lines.extend(f"[{i}] {n}" for i, n in enumerate(footnotes, 1))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("rows", type=Path, help="the JSON lines the benchmarks appended (--summary FILE)")
    ap.add_argument(
        "--markdown",
        action="append",
        default=[],
        metavar="SCRIPT=FILE",
        help="a benchmark's printed output to read rows from (window_bench.py=FILE)",
    )
    ap.add_argument("--quick", action="store_true", help="say that these are --quick figures")
    args = ap.parse_args()
    rows: dict[str, Row] = {}
    for spec in args.markdown:
        script, _, file = spec.partition("=")
        if script != "window_bench.py":
            ap.error(f"--markdown: no reader for {script}")
        path = Path(file)
        if path.exists() and path.stat().st_size:
            for row in window_rows(path.read_text()):
                rows[row.key] = row
    if args.rows.exists():  # rows a benchmark wrote itself win over rows read from its output
        for line in args.rows.read_text().splitlines():
            if line.strip():
                row = from_json(json.loads(line))
                rows[row.key] = row
    print(render(rows, args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
