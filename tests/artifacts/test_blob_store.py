"""BlobServer, BlobCache and LibraryCacheManager in this process, over real TCP and real files."""

from __future__ import annotations

import asyncio
import hashlib
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from flott.configuration import Configuration
from flott.errors import ConfigurationError, JobArtifactError, JobSubmissionError
from flott.runtime.blob import BlobCache, BlobServer, LibraryCacheManager
from flott.runtime.blob.protocol import parse_port_range
from flott.runtime.blob.python_artifacts import (
    artifact_kind,
    collect_local_artifacts,
    materialize,
    zip_directory,
)
from flott.runtime.messages.execution import PythonArtifactDescriptor
from tests.artifacts.jobs import write_helper, write_package

JOB = "a" * 32
OTHER_JOB = "b" * 32


def config_for(tmp_path: Path) -> Configuration:
    return Configuration({"blob.storage.directory": str(tmp_path / "blobs")})


async def test_blob_round_trip_is_verified_and_cleanup_removes_the_job(tmp_path: Path) -> None:
    server = BlobServer(config_for(tmp_path))
    await server.start()
    try:
        src = tmp_path / "data.bin"
        src.write_bytes(b"x" * 1_000_000)
        key = await asyncio.to_thread(server.put_file, JOB, src)
        assert key == hashlib.sha256(src.read_bytes()).hexdigest()
        cache = BlobCache(tmp_path / "cache", retries=0)
        first, second = await asyncio.gather(
            cache.get_file(JOB, key, server.address), cache.get_file(JOB, key, server.address)
        )
        assert first == second and first.read_bytes() == src.read_bytes()

        with pytest.raises(JobArtifactError, match="has no blob"):  # the server serves a blob to its job only
            await BlobCache(tmp_path / "cache2", retries=0).get_file(OTHER_JOB, key, server.address)

        server.cleanup_job(JOB)
        assert not (server.storage_dir / f"job_{JOB}").exists()
        cache.release(JOB)
        assert not first.exists(), "the TaskExecutor's copy goes once no job there uses it"
        with pytest.raises(JobArtifactError, match="has no blob"):
            await cache.get_file(JOB, key, server.address)
    finally:
        await server.close()
    assert not server.storage_dir.exists(), "closing the server removes its store"


async def test_a_corrupt_blob_is_rejected_by_its_hash(tmp_path: Path) -> None:
    server = BlobServer(config_for(tmp_path))
    await server.start()
    try:
        src = tmp_path / "helper.py"
        src.write_text("X = 1\n")
        key = await asyncio.to_thread(server.put_file, JOB, src)
        server.get_file(JOB, key).write_text("X = 2\n")  # bit rot / tampering on the JobManager's disk
        cache = BlobCache(tmp_path / "cache", retries=1)
        with pytest.raises(JobArtifactError, match="corrupt"):
            await cache.get_file(JOB, key, server.address)
        assert not cache.path_of(key).exists()
        with pytest.raises(JobArtifactError, match="changed after it was received"):
            server.put_file(JOB, src, expected_sha256="0" * 64)
    finally:
        await server.close()


async def test_an_unreachable_blob_server_fails_after_the_retries(tmp_path: Path) -> None:
    server = BlobServer(config_for(tmp_path))
    await server.start()
    address = server.address
    await server.close()
    cache = BlobCache(tmp_path / "cache", retries=1)
    with pytest.raises(JobArtifactError, match="after 2 attempts"):
        await cache.get_file(JOB, "0" * 64, address)


def test_port_ranges_and_artifact_kinds() -> None:
    assert parse_port_range("0") == [0]
    assert parse_port_range("50100-50102") == [50100, 50101, 50102]
    assert parse_port_range("6124, 6130") == [6124, 6130]
    with pytest.raises(ConfigurationError, match=r"blob\.server\.port"):
        parse_port_range("high")
    assert artifact_kind("helper.py") == "file"
    assert artifact_kind("lib.zip") == "archive" and artifact_kind("dep-1.0-py3-none-any.whl") == "archive"
    assert artifact_kind("python_requirements_file_requirements.txt") == "requirements"
    assert artifact_kind("python_requirements_cache_wheels.zip") == "requirements-cache"


def test_directories_ship_as_packages_or_as_path_roots(tmp_path: Path) -> None:
    pkg = write_package(tmp_path / "src", "mypkg", 1)
    root = tmp_path / "modules"
    write_helper(root, "loose", "1")
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "inner.cpython-311.pyc").write_bytes(b"junk")
    with zipfile.ZipFile(zip_directory(pkg, tmp_path / "p.zip")) as zf:
        assert sorted(zf.namelist()) == ["mypkg/__init__.py", "mypkg/inner.py"], "a package keeps its name"
    with zipfile.ZipFile(zip_directory(root, tmp_path / "r.zip")) as zf:
        assert zf.namelist() == ["loose.py"], "any other directory is a path root (PyFlink)"

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    config = {
        "python.files": f"{pkg},{root / 'loose.py'},s3://bucket/remote.py",
        "python.requirements": f"{root / 'loose.py'}#{root}",
    }
    local = collect_local_artifacts(config, (), scratch)
    assert [a.entry_name for a in local] == [
        "mypkg.zip",
        "loose.py",
        "python_requirements_file_loose.py",
        "python_requirements_cache_modules.zip",
    ]
    with pytest.raises(JobSubmissionError, match="does not exist"):
        collect_local_artifacts({"python.files": str(tmp_path / "missing.py")}, (), scratch)
    twin = write_helper(tmp_path / "elsewhere", "loose", "2")
    with pytest.raises(JobSubmissionError, match=r"would arrive as 'loose\.py'"):
        collect_local_artifacts({"python.files": f"{root / 'loose.py'},{twin}"}, (), scratch)

    entry = materialize("archive", "mypkg.zip", local[0].path, tmp_path / "job", 0)
    assert (entry / "mypkg" / "inner.py").is_file()


async def _ship(server: BlobServer, job_id: str, files: list[Path]) -> list[PythonArtifactDescriptor]:
    out = []
    for f in files:
        key = await asyncio.to_thread(server.put_file, job_id, f)
        out.append(PythonArtifactDescriptor(f.name, key, artifact_kind(f.name)))
    return out


async def test_a_jobs_modules_are_importable_while_it_is_here_and_gone_after(tmp_path: Path) -> None:
    """The TaskExecutor's view, in this interpreter: sys.path and sys.modules before, during, after."""
    module = "flott_test_helper_lifecycle"
    helper = write_helper(tmp_path / "v1", module, "1")
    server = BlobServer(config_for(tmp_path))
    await server.start()
    libraries = LibraryCacheManager(config_for(tmp_path), "te-in-process")
    try:
        with pytest.raises(ModuleNotFoundError):
            __import__(module)
        libs = libraries.register_job(JOB, await _ship(server, JOB, [helper]), server.address)
        await asyncio.to_thread(libs.wait_ready, threading.Event())
        assert libs.path_entries and all(p in sys.path for p in libs.path_entries)
        assert __import__(module).describe(7) == f"{module}-1:7"

        # Another job here may not bring a different module under the same name ...
        clash = write_helper(tmp_path / "v2", module, "2")
        other = libraries.register_job(OTHER_JOB, await _ship(server, OTHER_JOB, [clash]), server.address)
        with pytest.raises(JobArtifactError, match="share one Python interpreter"):
            await asyncio.to_thread(other.wait_ready, threading.Event())
        teardown = libraries.release_job(OTHER_JOB)
        assert teardown is not None
        await teardown

        job_dir = libs.job_dir
        teardown = libraries.release_job(JOB)
        assert module not in sys.modules, "modules imported from the job's files are dropped"
        assert not any(p in sys.path for p in libs.path_entries)
        assert teardown is not None
        await teardown
        assert not job_dir.exists()
        with pytest.raises(ModuleNotFoundError):
            __import__(module)

        # ... but once the first job has left, it can.
        again = libraries.register_job(OTHER_JOB, await _ship(server, OTHER_JOB, [clash]), server.address)
        await asyncio.to_thread(again.wait_ready, threading.Event())
        assert __import__(module).describe(1) == f"{module}-2:1"
    finally:
        await libraries.close()
        await server.close()
    assert module not in sys.modules
    assert not libraries.root.exists()


async def test_waiting_tasks_see_a_missing_blob_as_an_error_and_a_cancel_as_a_cancel(tmp_path: Path) -> None:
    server = BlobServer(config_for(tmp_path))
    await server.start()
    libraries = LibraryCacheManager(
        Configuration({"blob.storage.directory": str(tmp_path / "blobs"), "blob.fetch.retries": "0"}), "te"
    )
    try:
        missing = [PythonArtifactDescriptor("helper.py", "f" * 64, "file")]
        libs = libraries.register_job(JOB, missing, server.address)
        with pytest.raises(JobArtifactError, match="has no blob"):
            await asyncio.to_thread(libs.wait_ready, threading.Event())
    finally:
        await libraries.close()
        await server.close()
