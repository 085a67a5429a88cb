"""``high-availability.type: none``: everything in this process, no ZooKeeper.

Leadership is granted at once with Flink's fixed session id (F6); a confirmed
address is handed to in-process retrievers; before any confirmation retrieval
reports the configured default address. Stores live in memory (the
JobResultStore on disk when a storage path is given).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping
from typing import Any

from flott.runtime.highavailability.services import (
    DEFAULT_LEADER_SESSION_ID,
    CheckpointIDCounter,
    HighAvailabilityServices,
    JobGraphStore,
    JobResultStore,
    LeaderContender,
    LeaderElectionService,
    LeaderRetrievalListener,
    LeaderRetrievalService,
)


class _Component:
    def __init__(self) -> None:
        self.address: str | None = None
        self.session_id: str | None = None
        self.listeners: list[LeaderRetrievalListener] = []

    def publish(self, address: str | None, session_id: str | None) -> None:
        self.address, self.session_id = address, session_id
        for listener in list(self.listeners):
            listener.notify_leader_address(address, session_id)


class EmbeddedLeaderElectionService(LeaderElectionService):
    def __init__(self, component: _Component) -> None:
        self._component = component
        self._contender: LeaderContender | None = None
        self._leader = False

    def start(self, contender: LeaderContender) -> None:
        self._contender = contender
        self._leader = True
        asyncio.get_running_loop().call_soon(self._grant)

    def _grant(self) -> None:
        if self._leader and self._contender is not None:
            self._contender.grant_leadership(DEFAULT_LEADER_SESSION_ID)

    def confirm_leadership(self, session_id: str, address: str) -> None:
        if self.has_leadership(session_id):
            self._component.publish(address, session_id)

    def has_leadership(self, session_id: str) -> bool:
        return self._leader and session_id == DEFAULT_LEADER_SESSION_ID

    async def stop(self) -> None:
        if self._leader:
            self._leader = False
            if self._contender is not None:
                self._contender.revoke_leadership()
            self._component.publish(None, None)


class EmbeddedLeaderRetrievalService(LeaderRetrievalService):
    def __init__(self, component: _Component, default_address: str | None) -> None:
        self._component = component
        self._default = default_address
        self._listener: LeaderRetrievalListener | None = None

    def start(self, listener: LeaderRetrievalListener) -> None:
        self._listener = listener
        self._component.listeners.append(listener)
        if self._component.address is not None:
            listener.notify_leader_address(self._component.address, self._component.session_id)
        elif self._default is not None:
            listener.notify_leader_address(self._default, DEFAULT_LEADER_SESSION_ID)

    async def stop(self) -> None:
        if self._listener is not None and self._listener in self._component.listeners:
            self._component.listeners.remove(self._listener)


class InMemoryJobGraphStore(JobGraphStore):
    def __init__(self) -> None:
        self._graphs: dict[str, bytes] = {}

    async def put_job_graph(self, job_id: str, payload: bytes, *, leader_node: str | None = None) -> None:
        self._graphs[job_id] = bytes(payload)

    async def recover_job_graph(self, job_id: str) -> bytes | None:
        return self._graphs.get(job_id)

    async def get_job_ids(self) -> list[str]:
        return sorted(self._graphs)

    async def remove_job_graph(self, job_id: str) -> None:
        self._graphs.pop(job_id, None)

    async def release_job_graph(self, job_id: str) -> None:
        return None


class InMemoryJobResultStore(JobResultStore):
    def __init__(self) -> None:
        self._dirty: dict[str, dict[str, Any]] = {}
        self._clean: dict[str, dict[str, Any]] = {}

    async def create_dirty_result(self, job_id: str, result: Mapping[str, Any]) -> None:
        if job_id in self._dirty or job_id in self._clean:
            raise ValueError(f"job {job_id} already has a job result entry")
        self._dirty[job_id] = copy.deepcopy(dict(result))

    async def mark_result_as_clean(self, job_id: str) -> None:
        if job_id in self._clean:
            return
        if job_id not in self._dirty:
            raise KeyError(f"no dirty job result entry for job {job_id}")
        self._clean[job_id] = self._dirty.pop(job_id)

    async def has_dirty_job_result_entry(self, job_id: str) -> bool:
        return job_id in self._dirty

    async def has_clean_job_result_entry(self, job_id: str) -> bool:
        return job_id in self._clean

    async def get_dirty_results(self) -> dict[str, dict[str, Any]]:
        return copy.deepcopy(self._dirty)


class InMemoryCheckpointIDCounter(CheckpointIDCounter):
    def __init__(self) -> None:
        self._next = 1

    async def get_and_increment(self) -> int:
        value = self._next
        self._next += 1
        return value

    async def get(self) -> int:
        return self._next

    async def set_count(self, value: int) -> None:
        self._next = value

    async def shutdown(self, globally_terminal: bool) -> None:
        return None


class EmbeddedHaServices(HighAvailabilityServices):
    def __init__(self, job_result_store: JobResultStore | None = None) -> None:
        self._components: dict[str, _Component] = {}
        self._job_graph_store = InMemoryJobGraphStore()
        self._job_result_store = job_result_store or InMemoryJobResultStore()
        self._counters: dict[str, InMemoryCheckpointIDCounter] = {}

    def _component(self, component_id: str) -> _Component:
        return self._components.setdefault(component_id, _Component())

    def get_leader_election_service(self, component_id: str) -> LeaderElectionService:
        return EmbeddedLeaderElectionService(self._component(component_id))

    def get_leader_retrieval_service(
        self, component_id: str, default_address: str | None = None
    ) -> LeaderRetrievalService:
        return EmbeddedLeaderRetrievalService(self._component(component_id), default_address)

    def get_job_graph_store(self) -> JobGraphStore:
        return self._job_graph_store

    def get_job_result_store(self) -> JobResultStore:
        return self._job_result_store

    def get_checkpoint_id_counter(self, job_id: str) -> CheckpointIDCounter:
        return self._counters.setdefault(job_id, InMemoryCheckpointIDCounter())

    async def close(self) -> None:
        return None
