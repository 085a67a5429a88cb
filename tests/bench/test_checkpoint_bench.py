"""bench/checkpoint_bench.py --quick runs end to end (figures are noise here, not asserted).

Like tests/bench/test_bench_quick.py: the harness runs on tiny inputs so it never rots. It needs
no peers: a flott session cluster on loopback, 300k records and 50 MB of keyed state, one cluster.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.bench.markdown import markdown_tables

REPO = Path(__file__).resolve().parents[2]


def test_checkpoint_bench_quick_prints_bothmarkdown_tables(tmp_path: Path) -> None:
    rows = tmp_path / "summary.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "checkpoint_bench.py"),
            "--quick",
            "--no-peers",
            "--summary",
            str(rows),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=str(REPO),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    overhead, state, slow = markdown_tables(proc.stdout)[:3]
    assert [r[0] for r in overhead[1:]] == ["no checkpoints", "checkpoint every 1 s"]
    completed = overhead[2][overhead[0].index("checkpoints completed (median)")]
    assert completed.split()[0].isdigit() and int(completed.split()[0]) >= 1
    backends = [r[0] for r in state[1:]]
    assert backends[0] == "hashmap"
    assert set(backends) <= {"hashmap", "rocksdb"}
    if "rocksdb" not in backends:
        assert "RocksDB backend not measured" in proc.stdout
    size = state[0].index("savepoint size on disk")
    assert all(r[size].endswith("MB") and float(r[size].split()[0]) >= 50 for r in state[1:])
    summary = {row["key"]: row for row in map(json.loads, rows.read_text().splitlines())}
    assert len(summary["ck_every_1s"]["ratios"]) == 1
    assert summary["ck_savepoint"]["flott"].endswith("MB/s)")
    assert slow[1][0].startswith("map taking 50 ms per record")
    assert int(slow[1][slow[0].index("savepoints")]) >= 1
    assert float(slow[1][slow[0].index("trigger → COMPLETED seen s (median)")]) > 0
    assert summary["ck_slow_map"]["flott"].endswith(" s)")
