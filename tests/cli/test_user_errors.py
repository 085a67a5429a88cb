"""User mistakes end in a message the user can act on, not in flott's traceback.

Each case runs a real program through the real command line (``flott run``, ``flott run -m``,
``python job.py``) as a subprocess and reads stderr and the exit code, as a user would.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

MISSING_IMPORT = "import json\nimport no_such_module_for_flott_tests\n"

NOT_SUPPORTED = """
from flott.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.from_collection([1, 2]).iterate()
env.execute("refused")
"""

FAILING_UDF = """
from flott.datastream import StreamExecutionEnvironment


def invert(x):
    return 10 // (x - 2)


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
env.from_collection([1, 2, 3]).map(invert).print()
env.execute("failing-udf")
"""

NO_EXECUTE = """
from flott.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.from_collection([1, 2]).print()
"""


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["FLOTT_LOG_DIR"] = str(cwd / "log")
    env.pop("FLOTT_CONF_DIR", None)
    env.pop("FLINK_CONF_DIR", None)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=cwd, env=env)


def flott(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "flott.cli.main", *args], cwd)


def _script(tmp_path: Path, text: str) -> str:
    path = tmp_path / "job.py"
    path.write_text(text)
    return str(path)


def _unused_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_missing_import_is_one_line_with_and_without_a_cluster(tmp_path: Path) -> None:
    job = _script(tmp_path, MISSING_IMPORT)
    for args in (["run", job], ["run", "-m", _unused_address(), job]):
        done = flott(*args, cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert "job.py, line 2" in lines[0]
        assert "ModuleNotFoundError: No module named 'no_such_module_for_flott_tests'" in lines[0]
        assert "-pyfs" in lines[0] and "-v shows the traceback" in lines[0]
    verbose = flott("run", "-v", job, cwd=tmp_path)
    assert verbose.returncode == 1
    assert "Traceback (most recent call last)" in verbose.stderr
    assert f'File "{job}", line 2, in <module>' in verbose.stderr
    assert "click" not in verbose.stderr and "runpy" not in verbose.stderr, "the program's frames only"


def test_bad_configuration_value_is_one_line(tmp_path: Path) -> None:
    done = flott("run", "-D", "parallelism.default=abc", _script(tmp_path, NO_EXECUTE), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == "Error: parallelism.default: expected an integer, got 'abc'"


def test_not_yet_supported_under_flott_run_and_python(tmp_path: Path) -> None:
    job = _script(tmp_path, NOT_SUPPORTED)
    done = flott("run", job, cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "iterate" in lines[0] and "not yet supported by flott" in lines[0]
    assert "job.py, line 5" in lines[0]

    plain = _run([sys.executable, job], tmp_path)
    assert plain.returncode == 1
    assert f'File "{job}", line 5, in <module>' in plain.stderr
    assert "flott.errors.NotYetSupportedError: DataStream.iterate" in plain.stderr
    assert "/flott/" not in plain.stderr, "no frame inside flott"


def test_failing_udf_under_python_shows_the_users_frames_only(tmp_path: Path) -> None:
    job = _script(tmp_path, FAILING_UDF)
    done = _run([sys.executable, job], tmp_path)
    assert done.returncode == 1
    err = done.stderr
    assert f'File "{job}", line 12, in <module>' in err, "where the program called execute()"
    assert f'File "{job}", line 6, in invert' in err, "where the function failed, on the TaskExecutor"
    assert "ZeroDivisionError: integer division or modulo by zero" in err
    assert "flott.errors.JobExecutionError: Job 'failing-udf'" in err
    assert "completable_future" not in err and "job_client" not in err
    assert "The above exception was the direct cause" not in err
    assert err.count("Traceback (most recent call last)") == 2, err


def test_failing_udf_under_flott_run(tmp_path: Path) -> None:
    done = flott("run", _script(tmp_path, FAILING_UDF), cwd=tmp_path)
    assert done.returncode == 1
    assert "Job 'failing-udf'" in done.stderr and "failed: ZeroDivisionError" in done.stderr
    assert 'job.py", line 6, in invert' in done.stderr
    assert "completable_future" not in done.stderr and "click" not in done.stderr


def test_program_without_execute_fails_as_in_flink(tmp_path: Path) -> None:
    done = flott("run", _script(tmp_path, NO_EXECUTE), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "The program didn't contain a job. Perhaps you forgot to call execute() on the execution environment."
    )


def test_a_dead_cluster_is_named_at_the_first_refused_connection(tmp_path: Path) -> None:
    """Flink's client retries silently for a minute (rest.retry.*); flott keeps the policy but says
    at once that nothing answers, and how long it goes on trying."""
    address = _unused_address()
    retry = ["-D", "rest.retry.max-attempts=1", "-D", "rest.retry.delay=200ms"]
    for command in (["list"], ["cancel", "0" * 32]):
        run = flott(*command, "-m", address, *retry, cwd=tmp_path)
        assert run.returncode != 0
        first, *rest = run.stderr.strip().splitlines()
        assert f"cannot connect to the REST endpoint at http://{address}" in first, run.stderr
        assert "retrying 1 more time(s), 0.2 s apart (rest.retry.max-attempts, rest.retry.delay)" in first
        assert rest and "cannot connect" in rest[-1] and "Traceback" not in run.stderr
