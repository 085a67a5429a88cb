"""The program of ``/jars/:id/plan`` and ``/jars/:id/run``, planned in a child of the JobManager.

Flink's jar handlers run the jar's ``main()`` inside the JobManager (its PackagedProgram, with a
plan-capturing environment). flott never runs user code in the JobManager's interpreter: the REST
endpoint starts ``python -m flott.cli.packaged_program --out DIR [-D k=v ...] (--script FILE |
--module NAME --archive ZIP) -- ARGS`` in a process of its own (bounded in time and memory by the
caller), which runs the program in plan mode as ``flott run`` does (same ``sys.argv``, same
``python.files`` layout through :func:`~flott.cli.run_command.client_python_files`), stops it at
its first ``env.execute()`` (as Flink's plan environment does: one job per program), and leaves
in ``DIR``:

* ``job_graph.bin``: the flott JobGraph (msgpack; the JobManager decodes it as data, never
  unpickles it), credentials removed;
* ``artifacts.json`` and ``artifacts/``: the job's local Python files (``python.files``,
  ``python.requirements``, zipped directories) copied under the entry names the cluster sees;
* or, when the program failed or submitted nothing, ``error.txt``: one line saying why (the
  program's own frame, never a traceback), and exit code 1.
"""

from __future__ import annotations

import argparse
import json
import runpy
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from flott.cli.run_command import NO_JOB_MESSAGE, client_python_files, failure_headline
from flott.cli.run_options import ProgramEntry
from flott.client import pipeline_executor
from flott.configuration import Configuration, take_secrets_from_environment
from flott.rest.authentication import without_credentials
from flott.rest.handler.jar.jar_program import ARTIFACTS_DIR, ARTIFACTS_FILE, ERROR_FILE, GRAPH_FILE
from flott.runtime.blob.python_artifacts import collect_local_artifacts
from flott.runtime.jobgraph import encode_job_graph

_MAX_ERROR_CHARS = 2000


class _Captured(Exception):
    """Ends the program at its ``env.execute()``: the plan is what the JobManager asked for."""


class _CapturingExecutor:
    def __init__(self) -> None:
        self.graphs: list[Any] = []

    def execute(self, job_graph: Any) -> Any:
        self.graphs.append(job_graph)
        raise _Captured()


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MAX_ERROR_CHARS else line[: _MAX_ERROR_CHARS - 3] + "..."


def plan_program(entry: Any, config: Configuration) -> Any:
    """The JobGraph of the program's first ``env.execute()``; raises ``ValueError`` with one line
    saying why there is none."""

    executor = _CapturingExecutor()
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [entry.target, *entry.args]
    if entry.kind == "script":
        sys.path.insert(0, str(Path(entry.target).resolve().parent))
    pipeline_executor.set_context_configuration(config)
    try:
        with pipeline_executor.use_executor(executor), client_python_files(config):
            if entry.kind == "script":
                runpy.run_path(entry.target, run_name="__main__")
            else:
                runpy.run_module(entry.target, run_name="__main__", alter_sys=True)
    except _Captured:
        pass
    except SystemExit as e:
        if not executor.graphs:
            code = e.code if e.code is not None else 0
            raise ValueError(f"The program exited (exit code {code}) before it submitted a job.") from None
    except Exception as e:  # the program's own mistake: one line, as `flott run` reports it
        if not executor.graphs:
            raise ValueError(failure_headline(e, entry)) from None
    finally:
        sys.argv = old_argv
        sys.path[:] = old_path
        pipeline_executor.set_context_configuration(None)
    if not executor.graphs:
        raise ValueError(NO_JOB_MESSAGE)
    return executor.graphs[0]


def write_plan(job_graph: Any, out: Path) -> None:
    """The graph and the job's local files, laid out as the module docstring says."""

    scratch = Path(tempfile.mkdtemp(prefix="flott-program-"))
    try:
        local = collect_local_artifacts(job_graph.config, (), scratch)
        (out / ARTIFACTS_DIR).mkdir()
        manifest = []
        for index, artifact in enumerate(local):
            name = f"artifact_{index}"
            shutil.copyfile(artifact.path, out / ARTIFACTS_DIR / name)
            manifest.append({"entryName": artifact.entry_name, "fileName": name})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    (out / GRAPH_FILE).write_bytes(encode_job_graph(without_credentials(job_graph)))
    (out / ARTIFACTS_FILE).write_text(json.dumps(manifest))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="flott-packaged-program")
    parser.add_argument("--out", required=True)
    parser.add_argument("--script")
    parser.add_argument("--module")
    parser.add_argument("-D", dest="dynamic", action="append", default=[])
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    out = Path(ns.out)
    args = tuple(ns.args[1:] if ns.args[:1] == ["--"] else ns.args)
    # Secrets come in the environment, never on the command line (ps).
    config = Configuration({**Configuration.parse_dynamic(ns.dynamic), **take_secrets_from_environment()})

    entry = ProgramEntry("script", ns.script, args) if ns.script else ProgramEntry("module", ns.module, args)
    try:
        job_graph = plan_program(entry, config)
        write_plan(job_graph, out)
    except Exception as e:  # ValueError from plan_program; anything else is said in one line too
        message = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"
        (out / ERROR_FILE).write_text(_one_line(message))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
