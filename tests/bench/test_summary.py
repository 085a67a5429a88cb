"""bench/summary.py: the one table of bench/run, from the benchmarks' rows; and bench/run --quick itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import summary  # noqa: E402
from benchlib import add_summary  # noqa: E402

WINDOW_OUTPUT = """
### Windowed aggregation: keyed tumbling event-time window count (3 interleaved round(s), 300 s in all)

| runner | input records | median s | min / max s | records/s (median) | vs bare loop (same input) \
| flott p=2 vs this (same input) | runs ok |
|---|---|---|---|---|---|---|---|
| bare loop, 1 process | 2,000,000 | 1.32 | 1.30 / 1.40 | 1.52 M | 1.00× |  | 3/3 |
| flott p=1 | 2,000,000 | 14.11 | 9.0 / 20.0 | 142 k | 0.10× (0.07–0.19) |  | 3/3 |
| flott p=2 | 2,000,000 | 23.87 | 20.0 / 30.0 | 84 k | 0.050× (0.040–0.090) |  | 3/3 |
| Bytewax 0.21, 1 process | 2,000,000 | 36.27 | 30.0 / 40.0 | 55 k | 0.030× | 1.52× (0.84–2.07) | 3/3 |
| Bytewax 0.21, 2 processes | 2,000,000 | 25.27 | 20.0 / 30.0 | 79 k | 0.050× | 1.42× (0.99–1.74) | 3/3 |

- --quick: PyFlink rows skipped (starting its MiniCluster and Python worker takes 15-60 s here).
"""


def _render(tmp_path: Path, *extra: str) -> list[list[str]]:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "summary.py"), str(tmp_path / "rows.jsonl"), *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    table = [
        line for line in proc.stdout.splitlines() if line.startswith("|") and not line.startswith("|---")
    ]
    return [[c.strip() for c in line.strip("|").split("|")] for line in table]


def test_verdicts_and_rows_nobody_reported(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    add_summary(rows, "wc_bare", "word count vs bare", "2.6 M words/s", "1.7 M words/s", [1.49, 0.81, 1.73])
    add_summary(rows, "wc_bytewax", "word count vs Bytewax", "2.6 M words/s", "480 k words/s", [1.5])
    add_summary(rows, "cp_cli_list", "CLI list", "390 ms", "10,873 ms", [0.04, 0.03])
    add_summary(rows, "cp_start_rest", "start", "2,207 ms", note="Flink 2.3: left out by --quick")
    add_summary(rows, "ck_savepoint", "1 GB savepoint", "4.52 s hashmap")
    table = _render(tmp_path)
    header, body = table[0], {r[0]: r for r in table[1:]}
    assert header == ["measure", "flott", "peer", "ratio median (min–max)", "target", "met?"]
    assert len(body) == len(summary.ROWS)
    assert body["word count vs bare"][3:] == ["1.49× (0.81–1.73)", "≥ 1.0×", "yes"]
    assert body["word count vs Bytewax"][3:] == ["1.50×", "≥ 2.0×", "no"]
    assert body["CLI list"][3:] == ["0.035× (0.030–0.040)", "≤ 0.1×", "yes"]
    assert body["start"][5].startswith("not measured [")
    assert body["1 GB savepoint"][3:] == ["–", "–", "–"]  # untargeted, a figure without a ratio
    failover = next(r for r in table if r[0].startswith("failover"))
    assert failover[5].startswith("not measured [")  # nobody reported it: a footnote says so


def test_window_rows_are_read_from_window_bench_output(tmp_path: Path) -> None:
    (tmp_path / "window.md").write_text(WINDOW_OUTPUT)
    table = _render(tmp_path, "--markdown", f"window_bench.py={tmp_path / 'window.md'}", "--quick")
    body = {r[0]: r for r in table[1:] if r[0].startswith("windowed count")}
    bare = body["windowed count, flott p=2 vs bare loop (throughput)"]
    assert bare[1:4] == ["84 k records/s (p=2)", "1.52 M records/s (bare loop)", "0.050× (0.040–0.090)"]
    bytewax = body["windowed count, flott p=2 vs Bytewax 0.21, its best configuration"]
    assert bytewax[2] == "79 k records/s (Bytewax 0.21, 2 processes)" and bytewax[3] == "1.42× (0.99–1.74)"
    pyflink = body["windowed count, flott p=2 vs PyFlink 2.3, its best parallelism"]
    assert pyflink[5].startswith("not measured [")


def test_rows_a_benchmark_wrote_win_over_its_parsed_output(tmp_path: Path) -> None:
    (tmp_path / "window.md").write_text(WINDOW_OUTPUT)
    add_summary(
        tmp_path / "rows.jsonl", "win_bare", "windowed (own row)", "1 records/s", "2 records/s", [0.5]
    )
    table = _render(tmp_path, "--markdown", f"window_bench.py={tmp_path / 'window.md'}")
    assert ["windowed (own row)", "1 records/s", "2 records/s", "0.50×", "–", "–"] in table


@pytest.mark.timeout(600)
def test_bench_run_quick_prints_the_summary_table(tmp_path: Path) -> None:
    """bench/run --quick --no-peers end to end: every benchmark runs, the summary table closes the output."""
    env = dict(os.environ, FLOTT_BENCH_RESULTS=str(tmp_path))
    proc = subprocess.run(
        [str(REPO / "bench" / "run"), "--quick", "--no-peers"],
        capture_output=True,
        text=True,
        timeout=580,
        cwd=str(REPO),
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    saved = list(tmp_path.glob("*-quick.md"))
    assert len(saved) == 1 and "## Summary" in saved[0].read_text()
    part = proc.stdout.split("## Summary")[1]
    table = [line for line in part.splitlines() if line.startswith("| ") and not line.startswith("| measure")]
    assert len(table) == len(summary.ROWS)
    measured = [line for line in table if not line.rstrip(" |").split("|")[-1].strip().startswith("not")]
    measures = " ".join(line.split("|")[1] for line in measured)
    # no peers: what is left is flott against itself and the bare loops
    assert "windowed count, flott p=2 vs bare loop" in measures
    assert "word count" in measures and "checkpoint every 1 s" in measures
    assert "(bench/run took " in proc.stdout
