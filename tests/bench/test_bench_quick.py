"""Benchmarks run on tiny inputs so the harness never rots (figures are noise here, not asserted).

The peers (Bytewax, PyFlink, a Flink session cluster) live in bench/.venv-peers,
which only ``bench/setup`` creates; where it is missing (CI) their rows are
skipped and the tests below that need them are skipped with the reason.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from benchlib import java_home, peer_available  # noqa: E402

from tests.bench.markdown import markdown_tables  # noqa: E402

NO_PEERS = "bench/.venv-peers is missing (bench/setup creates it with apache-flink and bytewax)"


def _run(args: list[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=timeout, cwd=str(REPO)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _summary_rows(path: Path) -> dict[str, dict[str, object]]:
    """The rows a benchmark appended with --summary, by key."""
    return {row["key"]: row for row in map(json.loads, path.read_text().splitlines())}


def test_word_count_bench_quick_prints_table(tmp_path: Path) -> None:
    rows = tmp_path / "summary.jsonl"
    proc = _run([str(REPO / "bench" / "word_count.py"), "--quick", "--no-peers", "--summary", str(rows)])
    throughput, memory = markdown_tables(proc.stdout)[:2]
    assert [r[0] for r in throughput[1:]] == [
        "bare loop, 1 process",
        "bare loop, 2 processes",
        "flott p=1",
        "flott p=2",
        "bare streaming loop, 1 process",
        "flott p=1 STREAMING",
        "flott p=2 STREAMING",
    ]
    assert all(r[2] != "failed" for r in throughput[1:])
    cpu = throughput[0].index("CPU s, all processes (median)")
    assert all(float(r[cpu]) > 0 for r in throughput[1:])
    roles = {(r[0], r[1]) for r in memory[1:]}
    assert ("flott p=2", "TaskExecutor") in roles
    assert ("flott p=2", "JobManager (embedded, in the client process)") in roles
    summary = _summary_rows(rows)
    assert set(summary) == {"wc_bare", "wc_streaming_bare", "wc_bytewax", "wc_pyflink", "rss_wc"}
    assert len(summary["wc_bare"]["ratios"]) == 1  # type: ignore[arg-type]
    assert len(summary["wc_streaming_bare"]["ratios"]) == 1  # type: ignore[arg-type]
    assert summary["wc_bytewax"]["ratios"] == [] and summary["wc_bytewax"]["note"] == "--no-peers"


@pytest.mark.skipif(not peer_available("bytewax"), reason=NO_PEERS)
def test_word_count_bench_quick_with_bytewax() -> None:
    proc = _run([str(REPO / "bench" / "word_count.py"), "--quick", "--only", "bytewax"])
    names = [r[0] for r in markdown_tables(proc.stdout)[0][1:]]
    assert "Bytewax 0.21, 2 processes" in names
    assert "failed" not in proc.stdout.split("### Memory")[0]


@pytest.mark.skipif(not (peer_available("pyflink") and java_home()), reason=NO_PEERS + " (or no Java)")
def test_word_count_bench_quick_with_pyflink() -> None:
    proc = _run([str(REPO / "bench" / "word_count.py"), "--quick", "--only", "pyflink"])
    names = [r[0] for r in markdown_tables(proc.stdout)[0][1:]]
    assert "PyFlink 2.3 p=1" in names
    assert "failed" not in proc.stdout.split("### Memory")[0]


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (bench/setup installs it)")
def test_rest_bench_quick_prints_table(tmp_path: Path) -> None:
    """rest_bench.py's old command line: control_plane.py, flott only."""
    rows = tmp_path / "summary.jsonl"
    proc = _run([str(REPO / "bench" / "rest_bench.py"), "--quick", "--no-peers", "--summary", str(rows)])
    assert "| GET /overview | flott |" in proc.stdout and "submit" in proc.stdout
    control = markdown_tables(proc.stdout)[0]
    savepoint = [r for r in control if r[0] == "savepoint trigger → COMPLETED seen"]
    assert [r[1] for r in savepoint] == ["flott"] and savepoint[0][2].replace(",", "").isdigit()
    summary = _summary_rows(rows)
    assert summary["cp_savepoint"]["flott"] and summary["cp_savepoint"]["ratios"] == []
    assert summary["rest_overview"]["note"] == "Flink 2.3: --no-peers"


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (bench/setup installs it)")
def test_rest_bench_rest_only_quick(tmp_path: Path) -> None:
    rows = tmp_path / "summary.jsonl"
    proc = _run([str(REPO / "bench" / "rest_bench.py"), "--rest-only", "--quick", "--summary", str(rows)])
    servers = {(r[0], r[1]) for r in markdown_tables(proc.stdout)[0][1:]}
    assert ("GET /jobs/overview", "flott") in servers
    assert ("GET /jobs/overview", "bare aiohttp (flott's JSON)") in servers
    summary = _summary_rows(rows)
    assert set(summary) == {"rest_only_overview", "rest_only_jobs_overview"}


@pytest.mark.timeout(900)
@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (bench/setup installs it)")
@pytest.mark.skipif(not (peer_available("pyflink") and java_home()), reason=NO_PEERS + " (or no Java)")
def test_control_plane_bench_quick_against_flink(tmp_path: Path) -> None:
    """Flink's whole cycle (start, run -d, list, cancel, savepoints, wrk): about 2 minutes."""
    rows = tmp_path / "summary.jsonl"
    proc = _run(
        [str(REPO / "bench" / "control_plane.py"), "--quick", "--with-flink", "--summary", str(rows)],
        timeout=850,
    )
    assert "| GET /overview | Flink 2.3 |" in proc.stdout
    assert "cluster start → REST ready" in proc.stdout
    control = markdown_tables(proc.stdout)[0]
    savepoint = {r[1]: r for r in control if r[0] == "savepoint trigger → COMPLETED seen"}
    assert set(savepoint) == {"flott", "Flink 2.3"}
    assert all(r[2].replace(",", "").isdigit() for r in savepoint.values())
    summary = _summary_rows(rows)
    for key in ("cp_start_rest", "cp_cli_list", "cp_cli_cancel", "cp_submit_running", "cp_savepoint"):
        assert len(summary[key]["ratios"]) == 1, summary[key]  # type: ignore[arg-type]
    assert len(summary["rest_jobs_overview"]["ratios"]) == 1  # type: ignore[arg-type]
