"""The conformance corpus: PyFlink programs, as PyFlink users write them, run on flott and on PyFlink.

Each program under ``programs/`` imports from ``pyflink``; flott runs it after the one change a user
makes, the import prefix ``pyflink`` -> ``flott``. ``golden/<name>.stdout`` is what the real PyFlink 2.3
printed for it (``scripts/conformance --regen`` records it again). Outputs are compared as multisets of
lines, because neither system orders records of parallel subtasks; the subtask prefix of PyFlink's print
sink (``2> ``) is kept as a prefix but not by number, since which subtask a key lands on is the hash's
business. A program that is meant to fail has ``golden/<name>.stderr-contains``: a substring that the
error output of both systems contains; both must exit non-zero, and what they printed before failing
is not compared (it depends on timing on both).
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
GOLDEN = HERE / "golden"
REPO = HERE.parent.parent
PEERS_PY = REPO / "bench" / ".venv-peers" / "bin" / "python"

_SUBTASK_PREFIX = re.compile(r"^([^:>]*:)?\d+> ")
_PREFIX = re.compile(r"\bpyflink\b")


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


def program_names() -> list[str]:
    return sorted(p.stem for p in PROGRAMS.glob("*.py"))


def flott_source(pyflink_source: str) -> str:
    """The user's one edit: the import prefix."""
    return _PREFIX.sub("flott", pyflink_source)


def normalized_lines(stdout: str) -> collections.Counter[str]:
    return collections.Counter(_SUBTASK_PREFIX.sub(r"\1N> ", line) for line in stdout.splitlines())


def run_on_flott(name: str, workdir: Path, timeout: float = 180) -> Run:
    script = workdir / f"{name}.py"
    script.write_text(flott_source((PROGRAMS / f"{name}.py").read_text()))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def run_on_pyflink(name: str, workdir: Path, timeout: float = 900) -> Run:
    """Runs the program unchanged on the real PyFlink, with the peers' venv first on PATH
    (as an activated venv would be), so PyFlink's Python workers find pyflink too."""
    env = dict(os.environ)
    env["PATH"] = f"{PEERS_PY.parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [str(PEERS_PY), str(PROGRAMS / f"{name}.py")],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def expected_failure(name: str) -> str | None:
    path = GOLDEN / f"{name}.stderr-contains"
    return path.read_text().strip() if path.exists() else None


def golden_stdout(name: str) -> str:
    return (GOLDEN / f"{name}.stdout").read_text()


def differences(expected: str, actual: str, limit: int = 20) -> str:
    """The lines one side has more often than the other, for an assertion message."""
    want, got = normalized_lines(expected), normalized_lines(actual)
    missing = list((want - got).elements())
    extra = list((got - want).elements())
    parts = []
    if missing:
        parts.append("missing on flott:\n  " + "\n  ".join(missing[:limit]))
    if extra:
        parts.append("only on flott:\n  " + "\n  ".join(extra[:limit]))
    return "\n".join(parts)
