"""``flott savepoint|stop|cancel -s|checkpoint`` and ``flott savepoint inspect``; ``flott run -s/-n``.

``inspect`` reads savepoint directories written here with the runtime's own snapshot writers. The
REST commands run against a scripted Dispatcher behind the real REST endpoint (the fake of
tests/rest/test_savepoint_routes.py), so they check what the CLI sends and prints without a job;
tests/e2e/test_savepoint_rest_cli.py runs them on a real cluster.
"""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from click.testing import CliRunner, Result

from flott.cli.main import cli
from flott.cli.savepoint_inspect import human_size
from flott.configuration import Configuration
from flott.rest.webmonitor.rest_server_endpoint import RestServerEndpoint
from flott.runtime.checkpoint.metadata import (
    SPLIT_DISTRIBUTE,
    CheckpointMetadata,
    OperatorMetadata,
    write_metadata,
)
from flott.runtime.checkpoint.snapshot import write_keyed_state, write_operator_state
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from flott.runtime.state.key_groups import assign_to_key_group
from tests.rest.test_savepoint_routes import FAKE_CONFIG, FakeCluster, FakeDispatcher

JOB = "a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6"
COUNT_OP = "0f" * 16
SOURCE_OP = "1e" * 16


def write_savepoint(directory: Path, users: int = 20) -> CheckpointMetadata:
    """A savepoint of a two-operator job: a source with operator (offset) state at parallelism 2,
    a keyed count (one ValueState) plus a MapState in some key groups at parallelism 2."""
    storage = FsspecCheckpointStorage()
    d = str(directory)
    counts: dict[int, dict[Any, Any]] = {}
    seen: dict[int, dict[Any, Any]] = {}
    for i in range(users):
        key = f"user-{i}"
        group = assign_to_key_group(key, 128)
        counts.setdefault(group, {})[key] = i * 10
        if i % 4 == 0:
            seen.setdefault(group, {})[key] = {"first": i}
    keyed = write_keyed_state(storage, d, COUNT_OP, {"count": ("VALUE", counts), "seen": ("MAP", seen)})
    offsets = [
        write_operator_state(
            storage, d, SOURCE_OP, i, {"offsets": (SPLIT_DISTRIBUTE, [i * 100, i * 100 + 1])}
        )
        for i in range(2)
    ]
    meta = CheckpointMetadata(
        job_id=JOB,
        checkpoint_id=12,
        timestamp=1_700_000_000_000,
        is_savepoint=True,
        checkpoint_type="SAVEPOINT",
        operators=[
            OperatorMetadata(
                operator_id=COUNT_OP,
                parallelism=2,
                max_parallelism=128,
                uid="count-per-user",
                name="Keyed Reduce",
                keyed_state_kinds={"count": "VALUE", "seen": "MAP"},
                key_groups=keyed,
            ),
            OperatorMetadata(
                operator_id=SOURCE_OP,
                parallelism=2,
                max_parallelism=128,
                uid="clicks",
                name="Source: clicks",
                operator_states=offsets,
            ),
        ],
    )
    write_metadata(storage, d, meta)
    return meta


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def flott(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flott.cli.main", *args], capture_output=True, text=True, timeout=60
    )


# -- inspect ---------------------------------------------------------------------------------------


def test_inspect_prints_operators_states_and_sizes(tmp_path: Path) -> None:
    sp = tmp_path / "savepoint-a1b2c3-0123456789ab"
    meta = write_savepoint(sp)
    result = invoke("savepoint", "inspect", str(sp))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"Savepoint {sp}"
    assert f"job {JOB}, checkpoint 12 (SAVEPOINT, CANONICAL)" in lines[1]
    count = meta.operator("count-per-user")
    keyed_size = sum(h.size for h in count.key_groups)
    count_row = next(line for line in lines if COUNT_OP in line).split()
    assert count_row[:3] == ["count-per-user", "Keyed", "Reduce"]
    assert count_row[4:7] == ["2", "128", f"{len(count.key_groups)}/128"]
    source_row = next(line for line in lines if SOURCE_OP in line).split()
    assert source_row[:3] == ["clicks", "Source:", "clicks"] and source_row[6] == "-"
    states = {line.split()[1]: line for line in lines if line.startswith(("count-per-user ", "clicks "))}
    assert "keyed VALUE" in states["count"] and "20 keys" in states["count"]
    assert "keyed MAP" in states["seen"] and "5 keys" in states["seen"]
    assert "<= " in states["seen"], "'seen' shares key-group files with 'count': an upper bound"
    assert "operator list (SPLIT_DISTRIBUTE)" in states["offsets"] and "4 elements" in states["offsets"]
    assert lines[-1] == (
        f"Total state size: {human_size(meta.state_size)} ({meta.state_size} bytes) in "
        f"{len(count.key_groups) + 2} file(s), 2 operator(s)"
    )
    assert meta.state_size > keyed_size > 0


def test_inspect_single_state_size_is_exact_and_metadata_file_path_works(tmp_path: Path) -> None:
    storage = FsspecCheckpointStorage()
    handles = write_keyed_state(
        storage, str(tmp_path), COUNT_OP, {"total": ("VALUE", {3: {"k": 1}, 9: {"j": 2}})}
    )
    size = sum(h.size for h in handles)
    write_metadata(
        storage,
        str(tmp_path),
        CheckpointMetadata(
            job_id=JOB,
            checkpoint_id=4,
            timestamp=0,
            is_savepoint=False,
            checkpoint_type="CHECKPOINT",
            operators=[
                OperatorMetadata(
                    operator_id=COUNT_OP,
                    parallelism=1,
                    max_parallelism=16,
                    keyed_state_kinds={"total": "VALUE"},
                    key_groups=handles,
                )
            ],
        ),
    )
    result = invoke("savepoint", "inspect", str(tmp_path / "_metadata"))
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Checkpoint {tmp_path}")
    state_line = next(line for line in result.output.splitlines() if " total " in f" {line} ")
    assert f"{size} B" in state_line and "<=" not in state_line and "2 keys" in state_line
    assert "2/16" in result.output


def test_inspect_missing_and_corrupt_paths_fail_in_one_line(tmp_path: Path) -> None:
    missing = flott("savepoint", "inspect", str(tmp_path / "nope"))
    assert missing.returncode == 1
    assert (
        missing.stderr.strip()
        == f"Error: Cannot inspect {tmp_path / 'nope'}: snapshot path "
        + str(tmp_path / "nope")
        + " does not exist"
    )
    assert "Traceback" not in missing.stderr and missing.stdout == ""

    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke("savepoint", "inspect", str(empty))
    assert result.exit_code == 1 and "has no _metadata file" in result.output

    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "_metadata").write_bytes(b'{"format": "flott-snapshot", "format_vers')
    result = flott("savepoint", "inspect", str(corrupt))
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "corrupt snapshot metadata" in result.stderr and "Traceback" not in result.stderr

    other = tmp_path / "other"
    other.mkdir()
    (other / "_metadata").write_text('{"hello": 1}')
    result = invoke("savepoint", "inspect", str(other))
    assert result.exit_code == 1 and "is not a flott snapshot metadata file" in result.output

    result = invoke("savepoint", "inspect", "nosuchprotocol://bucket/sp")
    assert result.exit_code == 1 and "Cannot inspect nosuchprotocol://bucket/sp" in result.output


def test_inspect_reports_missing_state_files(tmp_path: Path) -> None:
    write_savepoint(tmp_path)
    victim = next((tmp_path / f"op-{COUNT_OP}").iterdir())
    victim.unlink()
    result = invoke("savepoint", "inspect", str(tmp_path))
    assert result.exit_code == 1
    assert "count-per-user" in result.output, "the table is still printed"
    assert "1 of" in result.output and "missing" in result.output and victim.name in result.output


def test_inspect_usage() -> None:
    result = CliRunner().invoke(cli, ["savepoint", "inspect"])
    assert result.exit_code == 2 and "exactly one PATH" in result.output


# -- run -s / -n -------------------------------------------------------------------------------------


def test_run_passes_restore_settings_into_the_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import flott.cli.run_command as run_command

    captured: list[Configuration] = []

    def fake_run(entry: Any, config: Configuration, *rest: Any) -> int:
        captured.append(config)
        return 0

    monkeypatch.setattr(run_command, "run_entry", fake_run)
    script = tmp_path / "job.py"
    script.write_text("")
    assert invoke("run", "-s", "/sp/savepoint-1", "-n", str(script)).exit_code == 0
    assert invoke("run", "--fromSavepoint", "/sp/savepoint-2", str(script)).exit_code == 0
    first, second = (c.to_dict() for c in captured)
    assert first["execution.savepoint.path"] == "/sp/savepoint-1"
    assert first["execution.savepoint.ignore-unclaimed-state"] == "true"
    assert second["execution.savepoint.path"] == "/sp/savepoint-2"
    assert "execution.savepoint.ignore-unclaimed-state" not in second

    # what the launcher configures is what the JobGraph carries (the JobMaster reads these keys)
    from flott.client import pipeline_executor
    from flott.datastream import StreamExecutionEnvironment

    pipeline_executor.set_context_configuration(captured[0])
    try:
        env = StreamExecutionEnvironment.get_execution_environment()
        env.from_collection([1, 2]).map(lambda x: x).uid("m").print()
        graph = env.get_job_graph("restored")
    finally:
        pipeline_executor.set_context_configuration(None)
    assert graph.savepoint_path == "/sp/savepoint-1" and graph.allow_non_restored_state
    assert graph.config["execution.savepoint.path"] == "/sp/savepoint-1"
    assert graph.config["execution.savepoint.ignore-unclaimed-state"] == "true"


# -- REST commands against a scripted Dispatcher ---------------------------------------------------


@pytest.fixture
async def fake() -> AsyncIterator[FakeCluster]:
    job_id = secrets.token_hex(16)
    dispatcher = FakeDispatcher({job_id: {}}, polls=1)
    config = Configuration(FAKE_CONFIG)
    endpoint = RestServerEndpoint(config, dispatcher)
    await endpoint.start()
    try:
        async with aiohttp.ClientSession() as http:
            yield FakeCluster(dispatcher, endpoint, config, http, job_id, job_id)
    finally:
        await endpoint.stop()


async def run_cli(fc: FakeCluster, *args: str) -> Result:
    """The CLI in a thread: the REST endpoint it calls runs on this test's event loop."""
    full = [args[0], "-m", fc.address, "-D", "client.timeout=5 s", *args[1:]]
    return await asyncio.to_thread(CliRunner().invoke, cli, full)


async def test_savepoint_stop_cancel_checkpoint_dispose_commands(fake: FakeCluster) -> None:
    job, calls = fake.job_id, fake.dispatcher.calls
    result = await run_cli(fake, "savepoint", job, "/sp")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"Triggering savepoint for job {job}."
    assert lines[1] == "Waiting for response..."
    assert lines[2].startswith(f"Savepoint completed. Path: /sp/savepoint-{job[:6]}-")
    assert calls[-1][:4] == ("savepoint", job, "/sp", False) and len(calls[-1][4]) == 32

    result = await run_cli(fake, "savepoint", "-detached", job, "/sp")
    assert result.exit_code == 0 and "Successfully trigger manual savepoint, triggerId: " in result.output

    result = await run_cli(fake, "stop", "-p", "/sp", "-d", job)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[:3] == [
        f'Draining job "{job}" with a CANONICAL savepoint.',
        f"Triggering stop-with-savepoint for job {job}.",
        "Waiting for response...",
    ]
    assert "Savepoint completed. Path: /sp/" in result.output
    assert calls[-1][:4] == ("stop", job, "/sp", True)

    result = await run_cli(fake, "stop", "--savepointPath=/sp2", "--type", "native", job)
    assert result.exit_code == 0 and f'Suspending job "{job}" with a NATIVE savepoint.' in result.output
    assert calls[-1][:4] == ("stop", job, "/sp2", False)

    result = await run_cli(fake, "cancel", "-s", "/sp", job)
    assert result.exit_code == 0, result.output
    assert "DEPRECATION WARNING" in result.output
    assert f"Cancelled job {job}. Savepoint stored in /sp/" in result.output
    assert calls[-1][:4] == ("savepoint", job, "/sp", True)

    result = await run_cli(fake, "checkpoint", "--full", job)
    assert result.exit_code == 0 and f"Checkpoint 7 for job {job} completed." in result.output
    assert calls[-1][:2] == ("checkpoint", job)

    result = await run_cli(fake, "savepoint", "--dispose", "/sp/savepoint-x")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "Disposing savepoint '/sp/savepoint-x'.",
        "Waiting for response...",
        "Savepoint '/sp/savepoint-x' disposed.",
    ]


async def test_command_failures_are_clear(fake: FakeCluster) -> None:
    job = fake.job_id
    result = await run_cli(fake, "savepoint", job, "/fail")
    assert result.exit_code == 1
    assert f"Triggering a savepoint for the job {job} failed." in result.output
    assert "ClusterError: /fail: the disk is full" in result.output

    result = await run_cli(fake, "stop", "-p", "/fail", job)
    assert result.exit_code == 1 and f'Could not stop with a savepoint job "{job}".' in result.output

    result = await run_cli(fake, "savepoint", "-d", "/fail/sp")
    assert result.exit_code == 1 and "Disposing the savepoint '/fail/sp' failed." in result.output

    result = await run_cli(fake, "savepoint", secrets.token_hex(16), "/sp")
    assert result.exit_code == 1 and "JobNotFoundError" not in result.output and "not found" in result.output

    result = await run_cli(fake, "stop", job)
    assert result.exit_code == 1 and "Property [targetDirectory] must be provided" in result.output

    result = await run_cli(fake, "savepoint", "not-a-job", "/sp")
    assert result.exit_code == 1 and "not a valid ID" in result.output

    result = await run_cli(fake, "savepoint", "-D", "client.timeout=300 ms", job, "/never")
    assert result.exit_code == 1 and "No answer within 0.3s (client.timeout)" in result.output
