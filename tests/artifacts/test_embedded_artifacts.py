"""``flott run --pyFiles/--pyRequirements`` on an embedded cluster: real TaskExecutor processes.

Each script lives in its own directory, its helpers in another: the script's
imports work on the client only because ``flott run`` lays out ``--pyFiles``
for it, and on the TaskExecutors only because the files travelled through the
embedded cluster's BlobServer.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.artifacts.conftest import flott
from tests.artifacts.jobs import build_wheel, write_helper, write_package, write_zip

SCRIPT = """\
import sys

from flott.datastream import StreamExecutionEnvironment

{imports}

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism({parallelism})
env.from_collection(list(range(4))){maps}.map(lambda x: "out=" + str(x)).print()
env.execute("{name}")
"""


def script(tmp_path: Path, name: str, imports: str, maps: str, parallelism: int = 2) -> Path:
    path = tmp_path / "job" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        SCRIPT.format(imports=textwrap.dedent(imports), maps=maps, name=name, parallelism=parallelism)
    )
    return path


def outputs(stdout: str) -> list[str]:
    return sorted(line.split("out=", 1)[1] for line in stdout.splitlines() if "out=" in line)


def test_py_files_modules_packages_and_zips_are_importable_on_the_task_executors(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    helper = write_helper(lib, "arti_helper", "7")
    package = write_package(tmp_path / "src", "arti_pkg", 1000)
    archive = write_zip(tmp_path / "dist" / "zipped.zip", "arti_zipped", "def neg(x):\n    return -x\n")
    job = script(
        tmp_path,
        "shipped",
        "import arti_helper\nimport arti_pkg\nimport arti_zipped",
        ".map(arti_pkg.plus).map(arti_zipped.neg).map(arti_helper.describe)",
    )
    blobs = tmp_path / "blobs"
    run = flott(
        "run",
        "--pyFiles",
        f"{helper},{package},{archive}",
        "-D",
        f"blob.storage.directory={blobs}",
        str(job),
    )
    assert run.returncode == 0, run.stderr
    assert outputs(run.stdout) == sorted(f"arti_helper-7:{-(x + 1000)}" for x in range(4))
    assert list(blobs.iterdir()) == [], "the embedded cluster's BlobServer and caches clean up"


def test_a_module_that_is_not_shipped_fails_the_task_with_module_not_found(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write_helper(lib, "arti_unshipped", "1")
    job = script(
        tmp_path,
        "unshipped",
        f"sys.path.insert(0, {str(lib)!r})  # importable here, on the client, only\nimport arti_unshipped",
        ".map(arti_unshipped.describe)",
    )
    run = flott("run", str(job))
    assert run.returncode == 1
    assert "ModuleNotFoundError: No module named 'arti_unshipped'" in " ".join(run.stderr.split())


def test_a_missing_py_file_is_reported_before_anything_starts(tmp_path: Path) -> None:
    job = script(tmp_path, "missing", "", "")
    run = flott("run", "--pyFiles", str(tmp_path / "nowhere.py"), str(job))
    assert run.returncode == 1
    stderr = " ".join(run.stderr.split())
    assert "could not be submitted" in stderr and "nowhere.py' does not exist" in stderr
    assert "submitting job" not in stderr


def test_requirements_are_pip_installed_from_the_shipped_cache_directory(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "arti_tinydep", "1.0", "def hello(x):\n    return 'tiny:' + str(x)\n")
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("arti_tinydep==1.0\n")
    job = script(
        tmp_path,
        "requirements",
        """
        def hello(x):
            import arti_tinydep  # installed on the TaskExecutors only

            return arti_tinydep.hello(x)
        """,
        ".map(hello)",
        parallelism=1,  # one TaskExecutor runs pip: this machine's cores are few
    )
    run = flott("run", "--pyRequirements", f"{requirements}#{wheels}", str(job))
    assert run.returncode == 0, run.stderr
    assert outputs(run.stdout) == [f"tiny:{x}" for x in range(4)]

    requirements.write_text("arti_tinydep==2.0\n")  # not in the cache directory
    failed = flott("run", "--pyRequirements", f"{requirements}#{wheels}", str(job))
    assert failed.returncode == 1
    stderr = " ".join(failed.stderr.split())
    assert "installing the requirements of job" in stderr and "requirements.txt) failed" in stderr
    assert "arti_tinydep==2.0" in stderr, "pip's own explanation is part of the cause"
