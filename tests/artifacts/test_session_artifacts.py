"""Job artifacts on a long-running cluster: RestClusterClient → REST → BlobServer → TaskExecutor processes."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from flott.errors import JobArtifactError, JobSubmissionError
from flott.runtime.rpc.service import error_from_wire
from tests.artifacts.conftest import flott, job_dirs, read_lines, wait_until
from tests.artifacts.jobs import import_job, probe_job, running_import_job, write_helper, write_package
from tests.cli.test_session_cluster import free_port


async def probe(rc: Any, module: str, out: Path) -> dict[str, Any]:
    """Run a job without artifacts on the cluster; what its TaskExecutor's interpreter holds."""
    async with rc.client() as client:
        job_id = await client.submit_job(probe_job("probe", module, out))
        assert (await client.wait_for_job_result(job_id, timeout_s=30)).status == "FINISHED"
    [line] = read_lines(out)
    return dict(json.loads(line))


async def test_rest_submission_ships_files_and_the_task_executor_forgets_them_after_the_job(
    clusters: Any, tmp_path: Path, blob_root: Path
) -> None:
    rc = await clusters(num_task_managers=1)
    assert await rc.cluster.dispatcher_gateway().request_blob_server_port() == rc.cluster.blob_server.port
    helper = write_helper(tmp_path / "lib", "arti_rest_helper", "3")
    package = write_package(tmp_path / "src", "arti_rest_pkg", 1)
    out = tmp_path / "out.txt"
    graph = import_job("rest", "arti_rest_helper", out, python_files=(str(helper), str(package)), n=6)
    async with rc.client() as client:
        job_id = await client.submit_job(graph)
        result = await client.wait_for_job_result(job_id, timeout_s=30)
    assert result.status == "FINISHED", result.failure
    assert sorted(read_lines(out)) == sorted(f"arti_rest_helper-3:{x}" for x in range(6))

    await wait_until(lambda: job_dirs(blob_root, job_id) == [], what="the job's blob directories to go")
    seen = await probe(rc, "arti_rest_helper", tmp_path / "probe.txt")
    assert seen == {"job_paths": [], "importable": False}, "no sys.path entry, no module of the job left"


async def test_two_jobs_with_different_helpers_share_one_task_executor(
    clusters: Any, tmp_path: Path, blob_root: Path
) -> None:
    rc = await clusters(num_task_managers=1, slots=2)
    helper_a = write_helper(tmp_path / "a", "arti_side_a", "1.0")
    helper_b = write_helper(tmp_path / "b", "arti_side_b", "2.0")
    out_a, out_b = tmp_path / "a.txt", tmp_path / "b.txt"
    async with rc.client() as client:
        job_a = await client.submit_job(running_import_job("a", "arti_side_a", out_a, (str(helper_a),)))
        job_b = await client.submit_job(running_import_job("b", "arti_side_b", out_b, (str(helper_b),)))
        await wait_until(lambda: len(read_lines(out_a)) >= 3 and len(read_lines(out_b)) >= 3,
                         what="both jobs to produce records")
        on_task_executors = job_dirs(blob_root, job_a) + job_dirs(blob_root, job_b)
        caches = {p.parents[1].name for p in on_task_executors if p.parent.name == "jobs"}
        assert len(caches) == 1 and len(on_task_executors) == 4, "both jobs' files on the one TaskExecutor"
        assert all(line.startswith("arti_side_a-1.0:") for line in read_lines(out_a))
        assert all(line.startswith("arti_side_b-2.0:") for line in read_lines(out_b))
        for job_id in (job_a, job_b):
            await client.cancel_job(job_id)
            assert (await client.wait_for_job_result(job_id, timeout_s=30)).status == "CANCELED"
    await wait_until(lambda: not job_dirs(blob_root, job_a) and not job_dirs(blob_root, job_b),
                     what="the per-job directories to go")
    assert (await probe(rc, "arti_side_a", tmp_path / "probe.txt"))["job_paths"] == []


async def test_one_module_name_with_two_contents_on_one_task_executor_fails_clearly(
    clusters: Any, tmp_path: Path, blob_root: Path
) -> None:
    rc = await clusters(num_task_managers=1, slots=2)
    v1 = write_helper(tmp_path / "v1", "arti_same", "1")
    v2 = write_helper(tmp_path / "v2", "arti_same", "2")
    async with rc.client() as client:
        running = await client.submit_job(
            running_import_job("v1", "arti_same", tmp_path / "v1.txt", (str(v1),))
        )
        await wait_until(lambda: len(read_lines(tmp_path / "v1.txt")) >= 1, what="the first job to run")
        second = await client.submit_job(import_job("v2", "arti_same", tmp_path / "v2.txt", (str(v2),)))
        result = await client.wait_for_job_result(second, timeout_s=30)
        assert result.status == "FAILED" and result.failure is not None
        cause = error_from_wire(result.failure)
        assert isinstance(cause, JobArtifactError)
        assert "module 'arti_same'" in cause.message and "share one Python interpreter" in cause.message

        await client.cancel_job(running)
        await client.wait_for_job_result(running, timeout_s=30)
        await wait_until(lambda: not job_dirs(blob_root, running), what="the first job to leave")
        third = await client.submit_job(import_job("v2-again", "arti_same", tmp_path / "v2.txt", (str(v2),)))
        assert (await client.wait_for_job_result(third, timeout_s=30)).status == "FINISHED"
    assert read_lines(tmp_path / "v2.txt") == [f"arti_same-2:{x}" for x in range(5)]


async def test_a_missing_or_corrupt_blob_fails_the_job_instead_of_hanging(
    clusters: Any, tmp_path: Path
) -> None:
    rc = await clusters(num_task_managers=1, **{"blob.fetch.retries": "1"})
    dispatcher, server = rc.cluster.dispatcher, rc.cluster.blob_server
    start_job = dispatcher._start_job

    async def start_after(damage: str, graph: Any, artifacts: Any) -> None:
        for a in artifacts:
            path = server.get_file(graph.job_id, a.blob_key)
            if damage == "delete":
                path.unlink()
            else:
                path.write_text("# not what was submitted\n")
        await start_job(graph, artifacts)

    helper = write_helper(tmp_path / "lib", "arti_lost", "1")
    async with rc.client() as client:
        for damage, expected in (("delete", "has no blob"), ("corrupt", "is corrupt")):
            dispatcher._start_job = lambda g, a, d=damage: start_after(d, g, a)  # type: ignore[method-assign]
            graph = import_job(damage, "arti_lost", tmp_path / "out.txt", python_files=(str(helper),))
            job_id = await client.submit_job(graph)
            result = await client.wait_for_job_result(job_id, timeout_s=60)
            assert result.status == "FAILED" and result.failure is not None
            assert expected in error_from_wire(result.failure).message

        missing = import_job("x", "m", tmp_path / "x", python_files=(str(tmp_path / "no.py"),))
        with pytest.raises(JobSubmissionError, match="does not exist"):
            await client.submit_job(missing)


def test_session_cluster_started_from_the_cli_ships_py_files(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("FLOTT_RUN_DIR", str(tmp_path / "run"))
    blobs = tmp_path / "blobs"
    port = free_port()
    conf = ["-D", f"rest.port={port}", "-D", "jobmanager.rpc.port=0", "-D", f"blob.storage.directory={blobs}"]
    helper = write_helper(tmp_path / "lib", "arti_cli_helper", "9")
    out = tmp_path / "out.txt"
    script = tmp_path / "job" / "cli_job.py"
    script.parent.mkdir()
    script.write_text(
        "import sys\n\nimport arti_cli_helper\n"
        "from flott.datastream import StreamExecutionEnvironment\n\n\n"
        "class Append:\n"
        "    def __init__(self, path):\n"
        "        self.path = path\n\n"
        "    def invoke(self, value, context):\n"
        "        with open(self.path, 'a') as f:\n"
        "            f.write(value + '\\n')\n\n\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "env.from_collection([1, 2, 3]).map(arti_cli_helper.describe).add_sink(Append(sys.argv[1]))\n"
        "env.execute('cli-artifacts')\n"
    )
    started = flott("cluster", "start", "--taskmanagers", "1", *conf)
    assert started.returncode == 0, started.stderr
    pid = int((tmp_path / "run" / f"cluster-{port}.pid").read_text())
    family = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    try:
        run = flott(
            "run", "-m", f"127.0.0.1:{port}", "-p", "1", "--pyFiles", str(helper), str(script), str(out)
        )
        assert run.returncode == 0, run.stderr
        assert sorted(read_lines(out)) == [f"arti_cli_helper-9:{x}" for x in (1, 2, 3)]
        deadline = time.monotonic() + 20
        while list(blobs.glob("blobCache-*/jobs/*")) or list(blobs.glob("blobStore-*/job_*")):
            assert time.monotonic() < deadline, "the job's blobs were not cleaned up"
            time.sleep(0.1)
    finally:
        stopped = flott("cluster", "stop", *conf)
        _, alive = psutil.wait_procs(family, timeout=15)
        for p in alive:
            os.kill(p.pid, signal.SIGKILL)
    assert stopped.returncode == 0, stopped.stderr
    assert not alive
    assert list(blobs.iterdir()) == [], "cluster stop removes the BlobServer store and the caches"
