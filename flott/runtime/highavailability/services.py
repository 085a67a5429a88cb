"""Interfaces of the high-availability services (Flink's HighAvailabilityServices).

Components and their ids: ``dispatcher``, ``resource_manager``, ``rest_server`` and,
per job, ``job-<jobId>`` (see :func:`job_component_id`). Leadership callbacks and
retrieval notifications always run on the asyncio loop the service was started on.
Store methods are coroutines; the ZooKeeper implementations run kazoo's blocking
calls in worker threads.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, Protocol

DISPATCHER = "dispatcher"
RESOURCE_MANAGER = "resource_manager"
REST_SERVER = "rest_server"

#: Flink's fixed leader session id of standalone/embedded leadership (F6).
DEFAULT_LEADER_SESSION_ID = "00000000-0000-0000-0000-000000000000"


def job_component_id(job_id: str) -> str:
    return f"job-{job_id}"


class HighAvailabilityError(Exception):
    pass


class LeaderContender(Protocol):
    """The component that wants to lead (Dispatcher runner, RM, JobMaster runner, REST)."""

    def grant_leadership(self, session_id: str) -> None:
        """Called on the loop. Start leader work, then ``confirm_leadership(session_id, address)``."""

    def revoke_leadership(self) -> None:
        """Called on the loop. Stop leader work at once."""

    def handle_error(self, error: BaseException) -> None:
        """An unrecoverable error of the election service."""


class LeaderRetrievalListener(Protocol):
    def notify_leader_address(self, address: str | None, session_id: str | None) -> None:
        """Called on the loop; ``None, None`` means there is no known leader."""

    def handle_error(self, error: BaseException) -> None: ...


class LeaderElectionService(abc.ABC):
    @abc.abstractmethod
    def start(self, contender: LeaderContender) -> None:
        """Join the election. Must be called on the loop the service belongs to."""

    @abc.abstractmethod
    def confirm_leadership(self, session_id: str, address: str) -> None:
        """Publish ``address`` for ``session_id`` if it is still the current session."""

    @abc.abstractmethod
    def has_leadership(self, session_id: str) -> bool: ...

    @abc.abstractmethod
    async def stop(self) -> None:
        """Leave the election; revokes leadership if held."""


class LeaderRetrievalService(abc.ABC):
    @abc.abstractmethod
    def start(self, listener: LeaderRetrievalListener) -> None: ...

    @abc.abstractmethod
    async def stop(self) -> None: ...


class JobGraphStore(abc.ABC):
    """Submitted job graphs that survive the leader. Payloads are opaque bytes."""

    @abc.abstractmethod
    async def put_job_graph(self, job_id: str, payload: bytes) -> None: ...

    @abc.abstractmethod
    async def recover_job_graph(self, job_id: str) -> bytes | None:
        """The payload (and this process holds a lock on it), or None if not stored."""

    @abc.abstractmethod
    async def get_job_ids(self) -> list[str]: ...

    @abc.abstractmethod
    async def remove_job_graph(self, job_id: str) -> None:
        """Global cleanup: delete the pointer and the payload. Idempotent."""

    @abc.abstractmethod
    async def release_job_graph(self, job_id: str) -> None:
        """Local cleanup: drop this process's lock, keep the data for the next leader."""

    async def close(self) -> None:
        return None


class JobResultStore(abc.ABC):
    """Dirty entry = job globally terminal, cleanup pending; clean = cleanup done.

    Contract (Flink C6): a dirty entry for a job that already has one (dirty or
    clean) raises; marking an unknown job clean raises ``KeyError``.
    """

    @abc.abstractmethod
    async def create_dirty_result(self, job_id: str, result: Mapping[str, Any]) -> None: ...

    @abc.abstractmethod
    async def mark_result_as_clean(self, job_id: str) -> None: ...

    @abc.abstractmethod
    async def has_dirty_job_result_entry(self, job_id: str) -> bool: ...

    @abc.abstractmethod
    async def has_clean_job_result_entry(self, job_id: str) -> bool: ...

    async def has_job_result_entry(self, job_id: str) -> bool:
        return await self.has_dirty_job_result_entry(job_id) or await self.has_clean_job_result_entry(job_id)

    @abc.abstractmethod
    async def get_dirty_results(self) -> dict[str, dict[str, Any]]: ...


class CheckpointIDCounter(abc.ABC):
    """Checkpoint ids per job; starts at 1 (Flink's INITIAL_CHECKPOINT_ID)."""

    @abc.abstractmethod
    async def get_and_increment(self) -> int: ...

    @abc.abstractmethod
    async def get(self) -> int: ...

    @abc.abstractmethod
    async def set_count(self, value: int) -> None: ...

    @abc.abstractmethod
    async def shutdown(self, globally_terminal: bool) -> None:
        """Delete the counter only when the job is globally terminal."""


class HighAvailabilityServices(abc.ABC):
    @abc.abstractmethod
    def get_leader_election_service(self, component_id: str) -> LeaderElectionService: ...

    @abc.abstractmethod
    def get_leader_retrieval_service(
        self, component_id: str, default_address: str | None = None
    ) -> LeaderRetrievalService: ...

    @abc.abstractmethod
    def get_job_graph_store(self) -> JobGraphStore: ...

    @abc.abstractmethod
    def get_job_result_store(self) -> JobResultStore: ...

    @abc.abstractmethod
    def get_checkpoint_id_counter(self, job_id: str) -> CheckpointIDCounter: ...

    @abc.abstractmethod
    async def close(self) -> None: ...

    async def close_and_cleanup_all_data(self) -> None:
        await self.close()
