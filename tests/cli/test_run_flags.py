"""``flott run`` with ``flink run``'s flags and their meaning, and config.yaml found as Flink finds it.

Every case runs the real command line as a subprocess; the programs run on a real embedded
cluster and print what they were given (their arguments, the parallelism they got).
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
print("argv", sys.argv[1:])
print("parallelism", env.get_parallelism())
env.from_collection([7]).print()
env.execute("flags")
"""


def flott(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = dict(os.environ)
    base["PYTHONPATH"] = os.pathsep.join([str(REPO), base.get("PYTHONPATH", "")])
    base["FLOTT_LOG_DIR"] = str(cwd / "log")
    base.pop("FLOTT_CONF_DIR", None)
    base.pop("FLINK_CONF_DIR", None)
    base.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "flott.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
        env=base,
    )


def printed(stdout: str) -> dict[str, str]:
    out = {}
    for line in stdout.splitlines():
        key, _, value = line.partition(" ")
        out[key] = value
    return out


def test_py_flag_and_program_arguments_as_flink_splits_them(tmp_path: Path) -> None:
    (tmp_path / "job.py").write_text(PROGRAM)
    done = flott("run", "-p", "2", "-py", "job.py", "--input", "x", "-p", "5", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    seen = printed(done.stdout)
    assert seen["argv"] == "['--input', 'x', '-p', '5']", "after the program's first own token: its args"
    assert seen["parallelism"] == "2"
    assert done.stdout.splitlines()[-1].endswith("> 7"), "the job ran at parallelism 2 (prefix 1> or 2>)"


def test_py_module_with_py_files_and_class_entry(tmp_path: Path) -> None:
    pkg = tmp_path / "code" / "jobs"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "counting.py").write_text(PROGRAM)
    done = flott(
        "run",
        "-pym",
        "jobs.counting",
        "-pyfs",
        str(tmp_path / "code"),
        "-Dparallelism.default=1",
        "a",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert printed(done.stdout)["argv"] == "['a']"
    # -c names the entry point; the directory after it goes on the path, as a jar does in Flink
    done = flott("run", "-c", "jobs.counting", str(tmp_path / "code"), "b", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert printed(done.stdout)["argv"] == "['b']"


def test_config_yaml_from_flott_conf_dir_then_flink_conf_dir(tmp_path: Path) -> None:
    (tmp_path / "job.py").write_text(PROGRAM)
    flott_conf, flink_conf = tmp_path / "flott-conf", tmp_path / "flink-conf"
    flott_conf.mkdir()
    flink_conf.mkdir()
    (flott_conf / "config.yaml").write_text("parallelism:\n  default: 3\n")
    (flink_conf / "config.yaml").write_text("parallelism.default: 2\n")
    both = {"FLOTT_CONF_DIR": str(flott_conf), "FLINK_CONF_DIR": str(flink_conf)}
    done = flott("run", "job.py", cwd=tmp_path, env=both)
    assert done.returncode == 0, done.stderr
    assert printed(done.stdout)["parallelism"] == "3", "FLOTT_CONF_DIR first"
    done = flott(
        "run", "-D", "parallelism.default=1", "job.py", cwd=tmp_path, env={"FLINK_CONF_DIR": str(flink_conf)}
    )
    assert done.returncode == 0, done.stderr
    assert printed(done.stdout)["parallelism"] == "1", "-D over the file"
    done = flott("run", "job.py", cwd=tmp_path, env={"FLINK_CONF_DIR": str(flink_conf)})
    assert printed(done.stdout)["parallelism"] == "2", "Flink's own config.yaml"


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--configDir", "nowhere"], {}, "the configuration directory nowhere does not exist"),
        ([], {"FLOTT_CONF_DIR": "."}, "$FLOTT_CONF_DIR: the configuration directory . holds no config.yaml"),
        (["--configDir", "job.py"], {}, "names a file"),
    ],
)
def test_a_named_config_dir_must_hold_config_yaml(
    tmp_path: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    (tmp_path / "job.py").write_text(PROGRAM)
    done = flott("run", *args, "job.py", cwd=tmp_path, env=env)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-pyarch", "venv.zip"], "-pyarch is not supported by flott"),
        (["-pyexec", "/usr/bin/python3"], "-pyexec is not supported by flott"),
        (["-pyclientexec", "/usr/bin/python3"], "-pyclientexec is not supported by flott"),
        (["-pypath", "/opt/lib"], "-pypath is not supported by flott"),
        (["-C", "file:///x.jar"], "-C is not supported by flott: flott has no JVM"),
        (["-cm", "claim", "-s", "/sp"], "-cm claim is not supported by flott"),
        (["-t", "yarn-session"], "-t yarn-session: flott run supports the targets 'local'"),
        (["-t", "local", "-m", "127.0.0.1:1"], "the target is 'local'"),
        (["-d"], "-d needs a cluster that outlives flott run"),
        (["-sae", "-m", "127.0.0.1:1"], "-sae is not supported by flott"),
        (["-x"], "No such option"),
        (["-pym", "a", "-py", "job.py"], "-py and -pym both name the program's entry point"),
    ],
)
def test_flags_flott_cannot_honour_are_refused(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "job.py").write_text("raise SystemExit('the program must not run')\n")
    done = flott("run", *args, "-py", "job.py", cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert message in done.stderr, done.stderr
    assert "the program must not run" not in done.stderr


def test_version(tmp_path: Path) -> None:
    done = flott("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("Version: "), done.stdout
