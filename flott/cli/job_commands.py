"""``flott list|cancel|stop|savepoint``: operate jobs of a running cluster over its REST API."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from flott.configuration import Configuration
from flott.errors import FlottError

T = TypeVar("T")

_RUNNING = {"RUNNING", "RESTARTING", "FAILING", "CANCELLING"}
_SCHEDULED = {"CREATED", "INITIALIZING", "RECONCILING"}


def with_client(config: Configuration, address: str | None, fn: Callable[[Any], Awaitable[T]]) -> T:
    from flott.client.rest_cluster_client import RestClusterClient

    async def go() -> T:
        async with RestClusterClient(config, address) as client:
            return await fn(client)

    try:
        return asyncio.run(go())
    except FlottError as e:
        raise click.ClickException(str(e)) from None


def _time(ms: int) -> str:
    if ms <= 0:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%d.%m.%Y %H:%M:%S")


def list_jobs(
    config: Configuration, address: str | None, running: bool, scheduled: bool, show_all: bool
) -> int:
    jobs = with_client(config, address, lambda c: c.list_jobs())
    if not (running or scheduled or show_all):
        running = scheduled = True
    wanted = set()
    if running:
        wanted |= _RUNNING
    if scheduled:
        wanted |= _SCHEDULED
    rows = [j for j in jobs if show_all or j.status in wanted]
    console = Console(width=max(Console().width, 110))
    if not rows:
        what = "jobs" if show_all else "running or scheduled jobs"
        console.print(f"No {what}.")
        return 0
    table = Table(show_header=True, header_style="bold")
    table.add_column("Job ID", no_wrap=True, min_width=32)
    table.add_column("Name")
    table.add_column("Status", no_wrap=True)
    table.add_column("Start time", no_wrap=True)
    table.add_column("Duration", no_wrap=True, justify="right")
    for j in rows:
        table.add_row(
            j.job_id, j.job_name, j.status, _time(j.start_time), f"{max(j.duration, 0) / 1000:.1f}s"
        )
    console.print(table)
    return 0


def cancel_job(config: Configuration, address: str | None, job_id: str) -> int:
    async def cancel(client: Any) -> None:
        await client.cancel_job(job_id)

    with_client(config, address, cancel)
    click.echo(f"Cancelled job {job_id}.")
    return 0
