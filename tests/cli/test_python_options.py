"""PyFlink's Python options flott cannot carry out are refused before the job starts, not ignored.

``add_python_archive``, ``register_cached_file`` and ``set_python_executable`` (to another
interpreter than the one the TaskExecutors run) each stop ``python job.py`` at ``execute()``
with a message naming the option; ``set_python_executable`` naming the embedded cluster's own
interpreter is what happens anyway, and runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROGRAM = """
import sys

from flott.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
{call}
env.from_collection([1, 2]).print()
env.execute("python-options")
"""


def run_program(tmp_path: Path, call: str) -> subprocess.CompletedProcess[str]:
    job = tmp_path / "job.py"
    job.write_text(PROGRAM.format(call=call))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["FLOTT_LOG_DIR"] = str(tmp_path / "log")
    return subprocess.run(
        [sys.executable, str(job)], capture_output=True, text=True, timeout=180, cwd=tmp_path, env=env
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("env.add_python_archive('venv.zip', 'venv')", "python.archives (venv.zip#venv; add_python_archive"),
        ("env.register_cached_file('/etc/hosts', 'hosts')", "pipeline.cached-files (register_cached_file)"),
        ("env.set_python_executable('/bin/sh')", "python.executable /bin/sh (set_python_executable"),
    ],
)
def test_refused_at_execute(tmp_path: Path, call: str, message: str) -> None:
    done = run_program(tmp_path, call)
    assert done.returncode == 1
    assert "flott.errors.NotYetSupportedError: " + message in done.stderr, done.stderr
    assert 'job.py", line 10, in <module>' in done.stderr, "points at the program's execute()"
    assert done.stdout == "", "no job ran"


def test_the_embedded_clusters_own_interpreter_is_accepted(tmp_path: Path) -> None:
    done = run_program(tmp_path, "env.set_python_executable(sys.executable)")
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == ["1", "2"]
