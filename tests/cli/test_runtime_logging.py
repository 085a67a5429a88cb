"""A program that logs to stdout, as PyFlink's examples do, sees only its own lines there.

The program runs as a user runs it — ``python job.py`` and ``flott run job.py``, as real
subprocesses with a real embedded cluster (TaskExecutor processes) — and the runtime's own
records (BlobServer, TaskExecutor registrations, job state transitions) are looked for in
the log file, where Flink puts them.
"""

from __future__ import annotations

import getpass
import os
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

JOB = """
import logging
import sys

from flott.common import Types
from flott.datastream import StreamExecutionEnvironment

logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(levelname)s %(name)s %(message)s")
log = logging.getLogger("wordjob")


def double(x):
    print(f"udf saw {x}")
    return x * 2


log.info("building the job")
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
env.from_collection([1, 2, 3], type_info=Types.INT()).map(double, output_type=Types.INT()).print()
env.execute("logging-job")
log.info("the job is done")
"""

OWN_LINES = Counter(
    [
        "INFO wordjob building the job",
        "udf saw 1",
        "udf saw 2",
        "udf saw 3",
        "2",
        "4",
        "6",
        "INFO wordjob the job is done",
    ]
)


def _env(log_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["FLOTT_LOG_DIR"] = str(log_dir)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env.pop("FLOTT_CONF_DIR", None)
    env.pop("FLINK_CONF_DIR", None)
    return env


def _log_name(process: str) -> str:
    return f"flott-{getpass.getuser()}-{process}-{socket.gethostname()}.log"


@pytest.mark.parametrize(
    ("launcher", "process"),
    [([sys.executable], "python"), ([sys.executable, "-m", "flott.cli.main", "run"], "client")],
    ids=["python job.py", "flott run job.py"],
)
def test_stdout_holds_only_the_programs_own_lines(tmp_path: Path, launcher: list[str], process: str) -> None:
    job = tmp_path / "job.py"
    job.write_text(JOB)
    log_dir = tmp_path / "log"
    done = subprocess.run(
        [*launcher, str(job)], capture_output=True, text=True, timeout=180, env=_env(log_dir), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert Counter(done.stdout.splitlines()) == OWN_LINES, done.stdout
    assert "BlobServer" not in done.stderr and "registered" not in done.stderr, "no INFO on the console"

    log_file = log_dir / _log_name(process)
    assert log_file.is_file(), sorted(p.name for p in log_dir.iterdir()) if log_dir.exists() else "no log dir"
    text = log_file.read_text()
    assert "BlobServer at" in text
    assert "TaskExecutor" in text and "registered" in text
    assert "RUNNING -> FINISHED" in text
    # the embedded cluster's TaskExecutor processes write to the same file
    pids = {line.split("[", 1)[1].split("]", 1)[0] for line in text.splitlines() if "[" in line}
    assert len(pids) >= 2, "the client and at least one TaskExecutor process logged"
    assert "wordjob" not in text, "the program's own records stay with the program's handlers"


def test_log_file_key_names_the_file(tmp_path: Path) -> None:
    job = tmp_path / "job.py"
    job.write_text(JOB)
    target = tmp_path / "elsewhere" / "my.log"
    done = subprocess.run(
        [sys.executable, "-m", "flott.cli.main", "run", "-D", f"log.file={target}", "-py", str(job)],
        capture_output=True,
        text=True,
        timeout=180,
        env=_env(tmp_path / "log"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert Counter(done.stdout.splitlines()) == OWN_LINES, done.stdout
    assert "RUNNING -> FINISHED" in target.read_text()
    assert not (tmp_path / "log").exists(), "log.file wins over the log directory"
