"""``flott info``: run the script in plan mode and print its JobGraph as Flink's JSON plan."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path
from typing import Any

import msgspec

from flott.client import pipeline_executor
from flott.configuration import Configuration
from flott.rest.handler.job.views import job_graph_plan
from flott.runtime.jobgraph import JobGraph


class _PlanCaptured(Exception):
    """Ends the script at its ``env.execute()``: the plan is all ``flott info`` wants."""


class PlanCaptureExecutor:
    def __init__(self) -> None:
        self.graphs: list[JobGraph] = []

    def execute(self, job_graph: JobGraph) -> Any:
        self.graphs.append(job_graph)
        raise _PlanCaptured()


def json_plan(graph: JobGraph) -> dict[str, Any]:
    """The plan as ``GET /jobs/:id/plan`` and ``POST /jars/:id/plan`` show it."""

    return msgspec.to_builtins(job_graph_plan(graph))  # type: ignore[no-any-return]


def print_plan(script: str, args: tuple[str, ...], config: Configuration) -> int:
    executor = PlanCaptureExecutor()
    old_argv = sys.argv
    sys.argv = [script, *args]
    sys.path.insert(0, str(Path(script).resolve().parent))
    pipeline_executor.set_context_configuration(config)
    try:
        with pipeline_executor.use_executor(executor):
            runpy.run_path(script, run_name="__main__")
    except _PlanCaptured:
        pass
    except Exception as e:  # the program's own mistake: one message, as under 'flott run'
        from flott.cli.run_command import report_program_failure
        from flott.cli.run_options import ProgramEntry

        report_program_failure(e, ProgramEntry("script", script, args))
        return 1
    finally:
        sys.argv = old_argv
        pipeline_executor.set_context_configuration(None)
    if not executor.graphs:
        print("The script did not call env.execute(): there is no plan to show.", file=sys.stderr)
        return 1
    print(json.dumps(json_plan(executor.graphs[0]), indent=2))
    return 0
