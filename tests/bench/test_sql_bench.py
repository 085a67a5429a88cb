"""bench/sql_bench.py on a tiny input, so the harness never rots (figures are noise here, not asserted)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.markdown import markdown_tables

REPO = Path(__file__).resolve().parents[2]


def test_sql_bench_quick_checks_duckdb_against_the_bare_loop() -> None:
    if importlib.util.find_spec("duckdb") is None:
        pytest.skip("duckdb is not installed (the test extra has it)")
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "sql_bench.py"), "--quick", "--records", "3000",
         "--only", "flott,duckdb"],
        capture_output=True, text=True, timeout=600, cwd=str(REPO),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (table,) = markdown_tables(proc.stdout)
    runners = {row[0]: row for row in table[1:]}
    assert "bare loop, 1 process" in runners
    duck = runners["DuckDB, 2 threads"]
    assert duck[-1] == "1/1" and duck[2] not in ("failed", "–")  # its rows matched the bare loop's
    if importlib.util.find_spec("flott.table") is None:
        assert "flott rows skipped: flott.table cannot be imported yet" in proc.stdout
    elif "flott rows skipped: flott.table refuses this benchmark's SQL at plan time" not in proc.stdout:
        assert runners["flott p=2"][-1] == "1/1"  # once flott plans it, its rows must match too
    assert "PyFlink" not in " ".join(runners)  # --only leaves the slow peer out


def test_a_wrong_result_fails_the_row() -> None:
    sys.path.insert(0, str(REPO / "bench"))
    import sql_bench

    _, windows, joined = sql_bench.bare_loop(500, 7)
    good = {
        "window_rows": [[a, w, c, s] for (a, w), (c, s) in windows.items()],
        "join_rows": [[k, c, s] for k, (c, s) in joined.items()],
    }
    sql_bench.check(good, windows, joined)
    bad = dict(good, window_rows=good["window_rows"][1:])
    with pytest.raises(AssertionError, match="window query"):
        sql_bench.check(bad, windows, joined)
    off = dict(good, join_rows=[[k, c + 1, s] for k, c, s in good["join_rows"]])
    with pytest.raises(AssertionError, match="join query"):
        sql_bench.check(off, windows, joined)
