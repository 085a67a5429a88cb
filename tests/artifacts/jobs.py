"""Files and jobs for the artifact tests: helper modules, a wheel, JobGraphs whose functions import them.

The helper modules live in the test's tmp_path only: neither the test
process nor a TaskExecutor (whose working directory is the repository) can
import them unless they are shipped. Functions and sinks are defined inside
the builders so cloudpickle ships them by value; the shipped module itself is
imported only inside the function, i.e. on the TaskExecutor.
"""

from __future__ import annotations

import base64
import hashlib
import warnings
import zipfile
from pathlib import Path
from typing import Any

from flott.common import Types, WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy
from flott.graph import MissingUidWarning
from flott.runtime.jobgraph import JobGraph


def write_helper(directory: Path, name: str, version: str) -> Path:
    """A module ``name`` whose ``describe(x)`` says which module and version produced it."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.py"
    path.write_text(
        f"NAME = {name!r}\nVERSION = {version!r}\n\n\n"
        "def describe(x):\n    return f'{NAME}-{VERSION}:{x}'\n"
    )
    return path


def write_package(directory: Path, name: str, offset: int) -> Path:
    """A package directory (``__init__.py`` + a submodule with a relative import)."""
    pkg = directory / name
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("from .inner import plus\n")
    (pkg / "inner.py").write_text(f"def plus(x):\n    return x + {offset}\n")
    return pkg


def write_zip(path: Path, module: str, body: str) -> Path:
    """A .zip holding one top-level module (PyFlink: a zip is extracted and its root importable)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{module}.py", body)
    return path


def build_wheel(directory: Path, name: str, version: str, body: str) -> Path:
    """A minimal pure-Python wheel, written by hand: no build tool and no network needed."""
    directory.mkdir(parents=True, exist_ok=True)
    dist_info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": body,
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nGenerator: flott-tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }

    def record(data: str) -> str:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data.encode()).digest()).rstrip(b"=").decode()
        return f"sha256={digest},{len(data.encode())}"

    path = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for member, data in files.items():
            zf.writestr(member, data)
        zf.writestr(
            f"{dist_info}/RECORD",
            "".join(f"{m},{record(d)}\n" for m, d in files.items()) + f"{dist_info}/RECORD,,\n",
        )
    return path


def _sink(out: Path) -> Any:
    class AppendLines:
        def __init__(self, path: str) -> None:
            self.path = path

        def invoke(self, value: Any, context: Any) -> None:
            with open(self.path, "a") as f:
                f.write(f"{value}\n")

    return AppendLines(str(out))


def _env(parallelism: int, python_files: tuple[str, ...], requirements: str | None) -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    for f in python_files:
        env.add_python_file(f)
    if requirements is not None:
        req, _, cache = requirements.partition("#")
        env.set_python_requirements(req, cache or None)
    return env


def import_job(
    name: str,
    module: str,
    out: Path,
    python_files: tuple[str, ...] = (),
    requirements: str | None = None,
    n: int = 5,
    parallelism: int = 1,
) -> JobGraph:
    """Bounded: maps 0..n-1 through ``module.describe`` (imported on the TaskExecutor), lines to ``out``."""
    env = _env(parallelism, python_files, requirements)

    def use_module(x: int) -> str:
        import importlib

        return str(importlib.import_module(module).describe(x))

    env.from_collection(list(range(n))).map(use_module).add_sink(_sink(out))
    return env.get_job_graph(name)


def running_import_job(
    name: str, module: str, out: Path, python_files: tuple[str, ...] = (), rate: float = 50.0
) -> JobGraph:
    """Unbounded (runs until cancelled): every record goes through ``module.describe``."""
    env = _env(1, python_files, None)

    def use_module(x: int) -> str:
        import importlib

        return str(importlib.import_module(module).describe(x))

    source = DataGeneratorSource(lambda i: i, None, RateLimiterStrategy.per_second(rate), Types.LONG())
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "numbers")
        .map(use_module)
        .add_sink(_sink(out))
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingUidWarning)
        return env.get_job_graph(name)


def probe_job(name: str, module: str, out: Path) -> JobGraph:
    """Reports what a TaskExecutor's interpreter holds: job paths on sys.path, and ``module``."""
    env = _env(1, (), None)

    def probe(x: int) -> str:
        import importlib
        import json
        import sys

        try:
            importlib.import_module(module)
            importable = True
        except ModuleNotFoundError:
            importable = False
        return json.dumps(
            {
                "job_paths": [p for p in sys.path if "blobCache-" in p],
                "importable": importable,
            }
        )

    env.from_collection([0]).map(probe).add_sink(_sink(out))
    return env.get_job_graph(name)
