"""A TaskExecutor's per-job Python environments (Flink: BlobLibraryCacheManager).

Flink gives every job a user-code ClassLoader built from the job's jars. The
Python counterpart is ``sys.path``: before a job's first task starts on this
TaskExecutor, its shipped files are fetched through the BlobCache, laid out in
a per-job directory (``.py`` files copied, archives extracted, requirements
installed with pip), and the directories go to the front of ``sys.path``.
When the job leaves the TaskExecutor (its last slot freed and its last task
ended) the entries are removed again, every module imported from them is
dropped from ``sys.modules``, and the per-job directory is deleted.

The limitation, and how it is guarded: all tasks of a TaskExecutor share one
interpreter, so one ``sys.modules``. Two jobs running on the same
TaskExecutor at the same time cannot each have their own module named
``helper``; whichever was imported first would serve both. A job whose shipped
files provide a top-level name that another job currently on this
TaskExecutor provides from *different* bytes therefore fails with
:class:`JobArtifactError` saying so (identical files are shared). A shipped
module whose name the TaskExecutor itself has already imported (``json``,
a dependency of flott) cannot replace it; that is logged as a warning.

Layout under ``<blob.storage.directory or tmp>/blobCache-<resource id>/``::

    blobs/blob_<sha256>                 the BlobCache (one download per key)
    jobs/job_<job id>_<n>/files/        the job's .py and other plain files
    jobs/job_<job id>_<n>/archive_<i>_<name>/   each extracted archive
    requirements/<hash>/                pip install --target, cached by the
                                        hash of the requirements (and cache)
                                        for the TaskExecutor's lifetime

All methods run on the TaskExecutor's event loop except
:meth:`JobLibraries.wait_ready`, which task threads call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import importlib
import itertools
import logging
import os
import shutil
import sys
import tempfile
import threading
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from flott.configuration import Configuration
from flott.errors import FlottError, JobArtifactError, TaskCancelledError
from flott.runtime.blob.blob_cache import BlobCache
from flott.runtime.blob.protocol import BLOB_FETCH_RETRIES, BLOB_STORAGE_DIRECTORY, is_job_id
from flott.runtime.blob.python_artifacts import materialize, split_list, top_level_names
from flott.runtime.messages.execution import PythonArtifactDescriptor
from flott.ssl_context import internal_ssl

log = logging.getLogger(__name__)

REQUIREMENTS_FIND_LINKS = "python.requirements.find-links"
"""Extra ``pip --find-links`` locations on the TaskExecutor's host (comma-separated; flott's key)."""
REQUIREMENTS_INSTALL_TIMEOUT = "python.requirements.install-timeout"
"""How long ``pip install`` of a job's requirements may take before the job fails (flott's key)."""

_counter = itertools.count()


@dataclass
class JobLibraries:
    """One job's Python environment on this TaskExecutor (Flink: a ClassLoaderLease's entry)."""

    job_id: str
    artifacts: tuple[PythonArtifactDescriptor, ...]
    blob_server_address: str
    job_dir: Path
    ready: concurrent.futures.Future[None] = field(default_factory=concurrent.futures.Future)
    preparation: asyncio.Task[None] | None = None
    path_entries: list[str] = field(default_factory=list)
    provides: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Top-level module name → (fingerprint of the bytes it comes from, entry name)."""

    def wait_ready(self, cancelled: threading.Event) -> None:
        """Block a task thread until the job's files are importable; raise the preparation's error."""
        while True:
            try:
                self.ready.result(timeout=0.1)
                return
            except concurrent.futures.TimeoutError:
                if cancelled.is_set():
                    raise TaskCancelledError(
                        "cancelled while the job's Python files were being prepared"
                    ) from None
            except concurrent.futures.CancelledError:
                raise TaskCancelledError(
                    "the job left this TaskExecutor before its files were ready"
                ) from None

    @property
    def token(self) -> str:
        """Unique per registration (a job can leave and come back while the old copy is torn down)."""
        return self.job_dir.name

    @property
    def active(self) -> bool:
        return self.ready.done() and not self.ready.cancelled() and self.ready.exception() is None


class LibraryCacheManager:
    def __init__(self, config: Configuration, resource_id: str) -> None:
        base = config.get(BLOB_STORAGE_DIRECTORY, "") or tempfile.gettempdir()
        safe_id = resource_id if is_job_id(resource_id) else hashlib.sha256(resource_id.encode()).hexdigest()
        self.root = Path(base).expanduser().resolve() / f"blobCache-{safe_id}"
        self.blob_cache = BlobCache(
            self.root, retries=config.get_int(BLOB_FETCH_RETRIES, 5), tls=internal_ssl(config)
        )
        self._find_links = split_list(config.get(REQUIREMENTS_FIND_LINKS, ""))
        self._install_timeout_s = config.get_seconds(REQUIREMENTS_INSTALL_TIMEOUT, "10 min")
        self.jobs: dict[str, JobLibraries] = {}
        self._installs: dict[str, asyncio.Future[Path]] = {}
        self._path_users: dict[str, set[str]] = {}
        """sys.path entry → tokens of the registrations using it (a requirements dir is shared)."""
        self._teardowns: set[asyncio.Task[None]] = set()

    # -- lifecycle of a job's environment ------------------------------------------------------

    def register_job(
        self, job_id: str, artifacts: Sequence[PythonArtifactDescriptor], blob_server_address: str
    ) -> JobLibraries:
        """The job's environment, starting its preparation on first use (one per job on this TE)."""
        libs = self.jobs.get(job_id)
        if libs is not None:
            return libs
        if not is_job_id(job_id):
            raise JobArtifactError(f"not a valid job id: {job_id!r}")
        job_dir = self.root / "jobs" / f"job_{job_id}_{next(_counter)}"
        libs = JobLibraries(job_id, tuple(artifacts), blob_server_address, job_dir)
        self.jobs[job_id] = libs
        libs.preparation = asyncio.get_running_loop().create_task(self._prepare(libs))
        return libs

    def release_job(self, job_id: str) -> asyncio.Task[None] | None:
        """The job left this TaskExecutor: its paths, modules, directory and blob references go.

        ``sys.path`` and ``sys.modules`` are cleaned at once (so a deployment of the
        same job arriving right after starts from a clean slate); deleting the
        files continues in the returned task.
        """
        libs = self.jobs.pop(job_id, None)
        if libs is None:
            return None
        if libs.preparation is not None and not libs.preparation.done():
            libs.preparation.cancel()
        if not libs.ready.done():
            libs.ready.cancel()
        removed = []
        for entry in libs.path_entries:
            users = self._path_users.get(entry, set())
            users.discard(libs.token)
            if not users:
                self._path_users.pop(entry, None)
                removed.append(entry)
        _remove_from_sys_path(removed)
        log.info("released the Python files of job %s (%d sys.path entries removed)", job_id, len(removed))
        teardown = asyncio.get_running_loop().create_task(self._tear_down(libs))
        self._teardowns.add(teardown)
        teardown.add_done_callback(self._teardowns.discard)
        return teardown

    async def _tear_down(self, libs: JobLibraries) -> None:
        if libs.preparation is not None:
            with contextlib.suppress(BaseException):
                await libs.preparation
        self.blob_cache.release(libs.token)
        await asyncio.to_thread(shutil.rmtree, libs.job_dir, True)

    async def close(self) -> None:
        for job_id in list(self.jobs):
            self.release_job(job_id)
        for teardown in list(self._teardowns):
            with contextlib.suppress(BaseException):
                await teardown
        for install in list(self._installs.values()):
            install.cancel()
        await asyncio.to_thread(shutil.rmtree, self.root, True)

    # -- preparation ---------------------------------------------------------------------------

    async def _prepare(self, libs: JobLibraries) -> None:
        try:
            entries, provides = await self._lay_out(libs)
            self._activate(libs, entries, provides)
        except asyncio.CancelledError:
            if not libs.ready.done():
                libs.ready.cancel()
            raise
        except BaseException as e:  # whatever went wrong fails the job's tasks, with the cause
            error = e if isinstance(e, FlottError) else JobArtifactError(
                f"preparing the Python files of job {libs.job_id} failed: {type(e).__name__}: {e}"
            )
            log.warning("job %s: %s", libs.job_id, error)
            if not libs.ready.done():
                libs.ready.set_exception(error)

    async def _lay_out(self, libs: JobLibraries) -> tuple[list[str], dict[str, tuple[str, str]]]:
        if not libs.blob_server_address:
            raise JobArtifactError(f"job {libs.job_id} ships Python files but names no BlobServer")
        entries: list[str] = []
        provides: dict[str, tuple[str, str]] = {}
        requirements: tuple[PythonArtifactDescriptor, Path] | None = None
        cache: tuple[PythonArtifactDescriptor, Path] | None = None
        for index, artifact in enumerate(libs.artifacts):
            blob = await self.blob_cache.get_file(
                libs.job_id, artifact.blob_key, libs.blob_server_address, user=libs.token
            )
            if artifact.kind == "requirements":
                requirements = (artifact, blob)
                continue
            if artifact.kind == "requirements-cache":
                cache = (artifact, blob)
                continue
            entry = await asyncio.to_thread(
                materialize, artifact.kind, artifact.entry_name, blob, libs.job_dir, index
            )
            if str(entry) not in entries:
                entries.append(str(entry))
            if artifact.kind == "file":
                stem = Path(artifact.entry_name).name.split(".", 1)[0]
                if artifact.entry_name.endswith(".py") and stem.isidentifier():
                    provides.setdefault(stem, (artifact.blob_key, artifact.entry_name))
            else:
                for name in await asyncio.to_thread(top_level_names, entry):
                    provides.setdefault(name, (artifact.blob_key, artifact.entry_name))
        if cache is not None and requirements is None:
            raise JobArtifactError(
                f"job {libs.job_id} ships a requirements cache ({cache[0].entry_name}) "
                "but no requirements file"
            )
        if requirements is not None:
            target = await self._requirements_dir(libs.job_id, requirements, cache)
            entries.append(str(target))
            fingerprint = "requirements:" + target.name
            for name in await asyncio.to_thread(top_level_names, target):
                provides.setdefault(name, (fingerprint, requirements[0].entry_name))
        return entries, provides

    def _activate(self, libs: JobLibraries, entries: list[str], provides: dict[str, tuple[str, str]]) -> None:
        """Check for clashes with the other jobs here, then put the entries on ``sys.path`` (no await)."""
        if self.jobs.get(libs.job_id) is not libs:
            raise asyncio.CancelledError  # released while the last step ran
        for other in self.jobs.values():
            if other is libs or not other.active:
                continue
            for name, (fingerprint, entry_name) in provides.items():
                theirs = other.provides.get(name)
                if theirs is not None and theirs[0] != fingerprint:
                    raise JobArtifactError(
                        f"job {libs.job_id} ships a module '{name}' (from {entry_name}) that differs from "
                        f"the '{name}' of job {other.job_id} (from {theirs[1]}), which runs on the same "
                        "TaskExecutor. Tasks of one TaskExecutor share one Python interpreter and so one "
                        "sys.modules: rename the module, ship identical files, or run the jobs on "
                        "different TaskExecutors."
                    )
        job_prefixes = tuple(p + os.sep for other in self.jobs.values() for p in other.path_entries)
        for name in sorted(provides):
            module = sys.modules.get(name)
            origin = getattr(module, "__file__", None) if module is not None else None
            from_a_job = bool(origin and job_prefixes and origin.startswith(job_prefixes))
            if module is not None and not from_a_job:
                log.warning(
                    "job %s ships a module '%s' but this TaskExecutor has already imported '%s' from %s; "
                    "the job's tasks will see that one",
                    libs.job_id, name, name, origin or "a built-in module",
                )
        libs.path_entries = entries
        libs.provides = provides
        for entry in reversed(entries):
            self._path_users.setdefault(entry, set()).add(libs.token)
            if entry not in sys.path:
                sys.path.insert(0, entry)
        importlib.invalidate_caches()
        libs.ready.set_result(None)
        log.info("job %s: Python files ready, on sys.path: %s", libs.job_id, entries)

    # -- requirements --------------------------------------------------------------------------

    async def _requirements_dir(
        self,
        job_id: str,
        requirements: tuple[PythonArtifactDescriptor, Path],
        cache: tuple[PythonArtifactDescriptor, Path] | None,
    ) -> Path:
        """Where the requirements are installed, installing them once per TaskExecutor and hash."""
        digest = hashlib.sha256(requirements[0].blob_key.encode())
        if cache is not None:
            digest.update(cache[0].blob_key.encode())
        for link in self._find_links:
            digest.update(link.encode())
        key = digest.hexdigest()[:40]
        target = self.root / "requirements" / key
        if target.is_dir():
            return target
        install = self._installs.get(key)
        if install is None:
            install = asyncio.ensure_future(self._pip_install(job_id, requirements, cache, target))
            self._installs[key] = install
            install.add_done_callback(lambda _: self._installs.pop(key, None))
        return await asyncio.shield(install)

    async def _pip_install(
        self,
        job_id: str,
        requirements: tuple[PythonArtifactDescriptor, Path],
        cache: tuple[PythonArtifactDescriptor, Path] | None,
        target: Path,
    ) -> Path:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.parent / f".installing-{target.name}-{next(_counter)}"
        links = target.parent / f".links-{target.name}-{next(_counter)}"
        cmd = [
            sys.executable, "-m", "pip", "install", "--target", str(staging), "--no-input",
            "--disable-pip-version-check", "--no-warn-script-location", "-r", str(requirements[1]),
        ]
        try:
            if cache is not None:
                await asyncio.to_thread(_extract, cache[1], links, cache[0].entry_name)
                cmd += ["--no-index", "--find-links", str(links)]
            for link in self._find_links:
                cmd += ["--find-links", link]
            env = {**os.environ, "PIP_NO_INPUT": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
            log.info("job %s: installing requirements: %s", job_id, " ".join(cmd))
            proc = await asyncio.create_subprocess_exec(
                *cmd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=str(links if cache is not None else target.parent),
                env=env,
            )
            try:
                out, _ = await asyncio.wait_for(proc.communicate(), self._install_timeout_s)
            except (TimeoutError, asyncio.CancelledError) as e:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
                if isinstance(e, asyncio.CancelledError):
                    raise
                raise JobArtifactError(
                    f"installing the requirements of job {job_id} ({requirements[0].entry_name}) did not "
                    f"finish within {self._install_timeout_s:.0f}s ({REQUIREMENTS_INSTALL_TIMEOUT})"
                ) from None
            if proc.returncode != 0:
                tail = "\n".join(out.decode("utf-8", "replace").strip().splitlines()[-15:])
                raise JobArtifactError(
                    f"installing the requirements of job {job_id} "
                    f"({requirements[0].entry_name.removeprefix('python_requirements_file_')}) failed: "
                    f"pip exited with {proc.returncode}:\n{tail}"
                )
            staging.mkdir(exist_ok=True)  # requirements with nothing to install
            os.replace(staging, target)
            return target
        finally:
            await asyncio.to_thread(shutil.rmtree, staging, True)
            await asyncio.to_thread(shutil.rmtree, links, True)


def _extract(archive: Path, dest: Path, entry_name: str) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(dest)
    except (zipfile.BadZipFile, OSError) as e:
        raise JobArtifactError(f"the job's archive {entry_name!r} cannot be extracted: {e}") from None


def _remove_from_sys_path(entries: Sequence[str]) -> None:
    """Take ``entries`` off ``sys.path`` and forget every module and finder that came from them."""
    if not entries:
        return
    prefixes = tuple(e.rstrip(os.sep) + os.sep for e in entries)
    doomed = []
    # Looked at before sys.path changes: a namespace package's __path__ is recomputed from it.
    for name, module in list(sys.modules.items()):
        try:
            origin = getattr(module, "__file__", None)
            locations = [origin] if isinstance(origin, str) else []
            locations += [str(p) for p in (getattr(module, "__path__", None) or [])]
        except Exception:  # a module with an odd __getattr__ is not one of ours
            continue
        if locations and all(loc.startswith(prefixes) or loc in entries for loc in locations):
            doomed.append(name)
    sys.path[:] = [p for p in sys.path if p not in entries]
    for name in doomed:
        sys.modules.pop(name, None)
    for key in list(sys.path_importer_cache):
        if key in entries or key.startswith(prefixes):
            sys.path_importer_cache.pop(key, None)
    importlib.invalidate_caches()
