"""Benchmarks run on tiny inputs so the harness never rots (figures are noise here, not asserted)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_word_count_bench_quick_prints_table() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "word_count.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
    assert [r.split("|")[1].strip() for r in rows[1:]] == ["bare loop (1 process)", "flott p=1", "flott p=2"]


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (bench/setup installs it)")
def test_rest_bench_quick_prints_table() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "rest_bench.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "| GET /overview | flott |" in proc.stdout and "Job submission" in proc.stdout
