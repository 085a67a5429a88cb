"""Table API and SQL programs, written as PyFlink users write them, print on flott what the real
PyFlink 2.3 printed for them (goldens in golden/, recorded with the peers' venv; compared as
multisets of lines like the conformance corpus). Each runs as its own process on an embedded
cluster with real TaskExecutors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance import corpus

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
GOLDEN = HERE / "golden"
NAMES = sorted(p.stem for p in PROGRAMS.glob("*.py"))


def test_every_program_has_a_golden() -> None:
    assert NAMES
    for name in NAMES:
        assert (GOLDEN / f"{name}.stdout").exists(), name


@pytest.mark.parametrize("name", NAMES)
def test_program_prints_what_pyflink_printed(name: str, tmp_path: Path) -> None:
    script = tmp_path / f"{name}.py"
    script.write_text(corpus.flott_source((PROGRAMS / f"{name}.py").read_text()))
    env = dict(os.environ, PYTHONPATH=str(corpus.REPO))
    run = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    golden = (GOLDEN / f"{name}.stdout").read_text()
    assert corpus.normalized_lines(run.stdout) == corpus.normalized_lines(golden), corpus.differences(
        golden, run.stdout
    )
