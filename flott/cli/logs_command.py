"""``flott logs JOBID [-f]``: print a job's own log (``GET /jobs/:jobid/logs``), also after it ended.

Each line is one of the job's tasks' output lines, prefixed with the task's name, its subtask and
its attempt (``Map (2/4) #0 | text``; ``!`` instead of ``|`` for stderr), or a status change of
the job (``== Job RESTARTING (...)``). ``-f`` follows the log, across restarts and JobManager
failovers (the REST client retries while no leader answers), until the job is globally
terminal; then it prints ``Job <id> <STATUS>.`` and exits with 0 if the job FINISHED and 1 if it
FAILED or was CANCELED, so ``flott run -d ... && flott logs -f JOBID`` can gate a script on the
job's outcome. Without ``-f`` it prints what the log holds now and exits 0.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import sys
import time
from typing import Any

import click

from flott.cli.job_commands import _check_job_id, _Endpoint
from flott.configuration import Configuration

POLL_INTERVAL_S = 0.5
_PAGE = 1000


def format_line(line: dict[str, Any], timestamps: bool = False) -> str:
    kind = line.get("kind", "")
    text = str(line.get("text", ""))
    if kind == "status":
        out = f"== {text}"
    elif kind == "truncated":
        out = f"== {text}"
    else:
        mark = "!" if kind == "stderr" else "|"
        out = f"{line.get('task', '')} #{line.get('attempt', 0)} {mark} {text}"
    if timestamps:
        ms = int(line.get("timestamp", 0))
        stamp = datetime.datetime.fromtimestamp(ms / 1000).isoformat(timespec="milliseconds")
        out = f"{stamp} {out}"
    return out


def print_job_logs(
    config: Configuration,
    address: str | None,
    job_id: str,
    follow: bool,
    tail: int | None = None,
    timestamps: bool = False,
    token: str | None = None,
) -> int:
    endpoint = _Endpoint(config, address, token)
    _check_job_id(job_id)
    try:
        return _print(endpoint, job_id, follow, -tail if tail is not None else 0, timestamps)
    except BrokenPipeError:  # `flott logs JOBID | head`: the reader has all it wanted
        with contextlib.suppress(OSError):  # the interpreter's final flush must not fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:  # Ctrl-C while following
        return 130


def _print(endpoint: _Endpoint, job_id: str, follow: bool, start: int, timestamps: bool) -> int:
    while True:
        page = endpoint.request("GET", f"/jobs/{job_id}/logs?from={start}&max={_PAGE}")
        lines = page.get("lines", [])
        if lines:
            sys.stdout.write("".join(format_line(line, timestamps) + "\n" for line in lines))
            sys.stdout.flush()
        start = int(page.get("next", start + len(lines)))
        if not follow:
            return 0
        if page.get("complete"):
            status = str(page.get("status", "UNKNOWN"))
            click.echo(f"Job {job_id} {status}.")
            return 0 if status == "FINISHED" else 1
        if len(lines) < _PAGE:
            time.sleep(POLL_INTERVAL_S)


__all__ = ["format_line", "print_job_logs"]
