"""Payload storage in ``high-availability.storageDir`` (any fsspec URL) and the filesystem
JobResultStore (Flink C7: ``<path>/<jobId>_DIRTY.json``, committed to ``<jobId>.json``
or deleted when ``delete_on_commit``)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Mapping
from typing import Any

import fsspec

from flott.runtime.highavailability.services import JobResultStore


class StateStorage:
    """Writes payloads under a directory and hands back their paths (Flink's
    RetrievableStateStorageHelper: ``<dir>/<prefix><random>``)."""

    def __init__(self, base_url: str) -> None:
        self.fs, self.base = fsspec.core.url_to_fs(base_url.rstrip("/"))

    def store(self, prefix: str, payload: bytes) -> str:
        self.fs.makedirs(self.base, exist_ok=True)
        path = f"{self.base}/{prefix}{uuid.uuid4().hex}"
        tmp = path + ".inprogress"
        with self.fs.open(tmp, "wb") as f:
            f.write(payload)
        self.fs.mv(tmp, path)
        return path

    def retrieve(self, path: str) -> bytes:
        with self.fs.open(path, "rb") as f:
            data: bytes = f.read()
        return data

    def discard(self, path: str) -> None:
        try:
            self.fs.rm(path)
        except FileNotFoundError:
            pass


class FileSystemJobResultStore(JobResultStore):
    VERSION = 1

    def __init__(self, base_url: str, delete_on_commit: bool = True) -> None:
        self.fs, self.base = fsspec.core.url_to_fs(base_url.rstrip("/"))
        self.delete_on_commit = delete_on_commit
        self.fs.makedirs(self.base, exist_ok=True)

    def _dirty(self, job_id: str) -> str:
        return f"{self.base}/{job_id}_DIRTY.json"

    def _clean(self, job_id: str) -> str:
        return f"{self.base}/{job_id}.json"

    def _create_dirty(self, job_id: str, result: Mapping[str, Any]) -> None:
        if self.fs.exists(self._dirty(job_id)) or self.fs.exists(self._clean(job_id)):
            raise ValueError(f"job {job_id} already has a job result entry")
        body = json.dumps({"result": dict(result), "version": self.VERSION}).encode()
        tmp = self._dirty(job_id) + ".inprogress"
        with self.fs.open(tmp, "wb") as f:
            f.write(body)
        self.fs.mv(tmp, self._dirty(job_id))

    def _mark_clean(self, job_id: str) -> None:
        dirty = self._dirty(job_id)
        if not self.fs.exists(dirty):
            if self.fs.exists(self._clean(job_id)):
                return  # already clean: idempotent
            raise KeyError(f"no dirty job result entry for job {job_id}")
        if self.delete_on_commit:
            self.fs.rm(dirty)
        else:
            self.fs.mv(dirty, self._clean(job_id))

    def _dirty_results(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        try:
            names = self.fs.ls(self.base, detail=False)
        except FileNotFoundError:
            return out
        for name in names:
            base = str(name).rsplit("/", 1)[-1]
            if base.endswith("_DIRTY.json"):
                with self.fs.open(f"{self.base}/{base}", "rb") as f:
                    out[base[: -len("_DIRTY.json")]] = json.loads(f.read())["result"]
        return out

    async def create_dirty_result(self, job_id: str, result: Mapping[str, Any]) -> None:
        await asyncio.to_thread(self._create_dirty, job_id, result)

    async def mark_result_as_clean(self, job_id: str) -> None:
        await asyncio.to_thread(self._mark_clean, job_id)

    async def has_dirty_job_result_entry(self, job_id: str) -> bool:
        return bool(await asyncio.to_thread(self.fs.exists, self._dirty(job_id)))

    async def has_clean_job_result_entry(self, job_id: str) -> bool:
        return bool(await asyncio.to_thread(self.fs.exists, self._clean(job_id)))

    async def get_dirty_results(self) -> dict[str, dict[str, Any]]:
        return await asyncio.to_thread(self._dirty_results)
