"""Planning an uploaded program in a child process, for ``/jars/:id/plan`` and ``/jars/:id/run``.

The JobManager never runs user code in its own interpreter: the program runs in
``python -m flott.cli.packaged_program`` (see there), in a fresh directory of its own under the
endpoint's upload directory, with its address space limited to ``flott.rest.program.memory``
and killed (with any process it started) after ``flott.rest.program.timeout``. What comes back
is data: a JobGraph decoded and validated as ``POST /jobs`` decodes one, and the job's Python
files, each checked to be a plain file of that directory under a plain entry name. A program
that fails is a 400 with its one-line error, as Flink answers a failing ``main()``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import resource
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from flott.configuration import Configuration, parse_memory_size, secrets_environment, split_secrets
from flott.errors import InvalidProgramError
from flott.rest.handler.job.job_submit_handler import MAX_ENTRY_NAME_BYTES, check_file_name
from flott.runtime.blob.python_artifacts import LocalArtifact, describe_local_artifacts
from flott.runtime.jobgraph import JobGraph, decode_job_graph
from flott.runtime.messages.job_artifacts import JobArtifact

PROGRAM_MODULE = "flott.cli.packaged_program"
TIMEOUT_KEY = "flott.rest.program.timeout"
MEMORY_KEY = "flott.rest.program.memory"
DEFAULT_TIMEOUT = "60 s"
DEFAULT_MEMORY = "2 gb"
# the files flott.cli.packaged_program leaves (it is run, never imported, from here)
GRAPH_FILE = "job_graph.bin"
ARTIFACTS_FILE = "artifacts.json"
ARTIFACTS_DIR = "artifacts"
ERROR_FILE = "error.txt"
_MAX_ERROR_BYTES = 4096
_MAX_GRAPH_BYTES = 256 * 1024 * 1024
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class ProgramInvocation:
    """What to run: a script file or a module (the archive holding it is in ``python.files``), its
    arguments and the configuration its environment gets (the cluster's, the request's
    ``flinkConfiguration`` and the keys its other fields set on top; the REST endpoint's own
    credentials are never passed on, secrets go in the child's environment)."""

    script: Path | None = None
    module: str | None = None
    args: tuple[str, ...] = ()
    config: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PlannedProgram:
    job_graph: JobGraph
    artifacts: list[JobArtifact]


def _limits(memory_bytes: int) -> None:  # in the child, between fork and exec
    os.setpgrp()  # its own process group: a timeout ends whatever the program started too
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def program_limits(config: Configuration) -> tuple[float, int]:
    """``(timeout in seconds, address-space bytes)`` a program's child gets."""

    timeout = config.get_seconds(TIMEOUT_KEY, DEFAULT_TIMEOUT)
    memory = parse_memory_size(MEMORY_KEY, config.get(MEMORY_KEY, DEFAULT_MEMORY))
    return timeout, memory


def command(invocation: ProgramInvocation, out: Path) -> list[str]:
    cmd = [sys.executable, "-m", PROGRAM_MODULE, "--out", str(out)]
    if invocation.script is not None:
        cmd += ["--script", str(invocation.script)]
    else:
        cmd += ["--module", str(invocation.module)]
    plain, _ = split_secrets(invocation.config)
    for key, value in plain.items():
        cmd += ["-D", f"{key}={value}"]
    return [*cmd, "--", *invocation.args]


async def plan_in_child(
    invocation: ProgramInvocation, work_dir: Path, timeout_s: float, memory_bytes: int
) -> PlannedProgram:
    """Run the program in plan mode in a child process; its JobGraph and Python files."""
    out = work_dir / "out"
    out.mkdir(parents=True)
    env = secrets_environment(split_secrets(invocation.config)[1], os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    proc = await asyncio.create_subprocess_exec(
        *command(invocation, out),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=None,  # what the program prints goes to the JobManager's stdout, as in Flink
        stderr=asyncio.subprocess.PIPE,
        cwd=work_dir,
        env=env,
        preexec_fn=lambda: _limits(memory_bytes),
    )
    assert proc.stderr is not None
    tail: collections.deque[str] = collections.deque(maxlen=5)
    pump = asyncio.get_running_loop().create_task(_keep_tail(proc.stderr, tail))
    try:
        await asyncio.wait_for(proc.wait(), timeout_s)
    except TimeoutError:
        raise InvalidProgramError(
            f"The program did not submit a job within {timeout_s:g} s ({TIMEOUT_KEY}): it was stopped."
        ) from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(pump, 2.0)
        pump.cancel()
    return await asyncio.to_thread(_read_result, out, proc.returncode or 0, list(tail), memory_bytes)


async def _keep_tail(stream: asyncio.StreamReader, tail: collections.deque[str]) -> None:
    """The last lines the child wrote to stderr, each cut short (the rest is read and dropped)."""
    while True:
        try:
            line = await stream.readline()
        except ValueError:  # a line longer than the stream's limit
            line = await stream.read(1 << 16)
        if not line:
            return
        text = line.decode("utf-8", "replace").strip()
        if text:
            tail.append(text[:500])


def _read_result(out: Path, returncode: int, tail: list[str], memory_bytes: int) -> PlannedProgram:
    error = out / ERROR_FILE
    if error.is_file() and not error.is_symlink():
        with error.open("rb") as f:
            message = f.read(_MAX_ERROR_BYTES).decode("utf-8", "replace").strip()
        raise InvalidProgramError(message or "The program failed.")
    if returncode != 0:
        last = tail[-1] if tail else "no error output"
        if returncode < 0:
            why = f"was killed by signal {-returncode}"
        else:
            why = f"ended with exit code {returncode}"
        if "MemoryError" in last:
            last += f" (the program may use at most {memory_bytes} bytes: {MEMORY_KEY})"
        raise InvalidProgramError(f"The program's process {why} before it submitted a job: {last}")
    graph_file = out / GRAPH_FILE
    if not graph_file.is_file() or graph_file.is_symlink() or graph_file.stat().st_size > _MAX_GRAPH_BYTES:
        raise InvalidProgramError("The program's process ended without a job graph.")
    job_graph = decode_job_graph(graph_file.read_bytes())
    manifest = json.loads((out / ARTIFACTS_FILE).read_text())
    local: list[LocalArtifact] = []
    base = (out / ARTIFACTS_DIR).resolve()
    for item in manifest:
        entry = check_file_name(str(item["entryName"]), MAX_ENTRY_NAME_BYTES, "an artifact entry name")
        path = (base / check_file_name(str(item["fileName"]))).resolve()
        if path.parent != base or not path.is_file() or path.is_symlink():
            raise InvalidProgramError(f"The program's file {entry!r} was not found where it was laid out.")
        local.append(LocalArtifact(entry, path))
    return PlannedProgram(job_graph, describe_local_artifacts(local))
