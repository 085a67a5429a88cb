"""Interfaces of the high-availability services (Flink's HighAvailabilityServices).

Components and their ids: ``dispatcher``, ``resource_manager``, ``rest_server`` and,
per job, ``job-<jobId>`` (see :func:`job_component_id`). Leadership callbacks and
retrieval notifications always run on the asyncio loop the service was started on.
Store methods are coroutines; the ZooKeeper implementations run kazoo's blocking
calls in worker threads.
"""

from __future__ import annotations

import abc
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from flott.errors import HighAvailabilityError

DISPATCHER = "dispatcher"
RESOURCE_MANAGER = "resource_manager"
REST_SERVER = "rest_server"

#: Flink's fixed leader session id of standalone/embedded leadership (F6).
DEFAULT_LEADER_SESSION_ID = "00000000-0000-0000-0000-000000000000"


def job_component_id(job_id: str) -> str:
    return f"job-{job_id}"


def job_master_fencing_token(session_id: str) -> str:
    """A JobMaster's fencing token under leader session ``session_id``: unique per JobMaster,
    and recognisably of that session (see :func:`is_token_of_session`)."""
    return f"{session_id}/{uuid.uuid4().hex}"


def is_token_of_session(token: str, session_id: str) -> bool:
    """Was ``token`` handed out under leader session ``session_id``? A TaskExecutor that knows
    the current session rejects JobMasters of any other (a deposed leader's)."""
    return token.startswith(session_id + "/")


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
    async def put_job_graph(self, job_id: str, payload: bytes, *, leader_node: str | None = None) -> None:
        """Store (or replace) the payload. With ``leader_node`` (the writer's latch node) the write
        only happens while that node exists, else ``LeadershipLostError``: a deposed leader cannot
        store a job the next leader would never recover."""

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


@dataclass(frozen=True)
class CompletedCheckpointPointer:
    checkpoint_id: int
    external_path: str
    """The checkpoint's (or savepoint's) directory; its ``_metadata`` is there."""
    checkpoint_type: str = "CHECKPOINT"


class CompletedCheckpointStore(abc.ABC):
    """Where a job's completed checkpoints are, for the next leader (Flink: CompletedCheckpointStore).

    Only pointers: the state itself stays in the checkpoint directory the tasks wrote."""

    @abc.abstractmethod
    async def add_checkpoint(
        self, pointer: CompletedCheckpointPointer, *, leader_node: str | None = None
    ) -> None:
        """Record a completed checkpoint (guarded by ``leader_node`` like ``put_job_graph``)."""

    @abc.abstractmethod
    async def get_all_checkpoints(self) -> list[CompletedCheckpointPointer]:
        """Oldest first."""

    @abc.abstractmethod
    async def shutdown(self, globally_terminal: bool) -> None:
        """Forget the pointers when the job is globally terminal."""


class CheckpointRecorder(Protocol):
    """What a JobMaster's checkpointing needs of HA (None in ``none`` mode).

    ``checkpoint_completed`` must have returned before any task hears that the checkpoint
    completed (transactional sinks commit then): a checkpoint whose side effects are
    committed is always the one a new leader restores, never an older one."""

    def checkpoint_triggered(self, checkpoint_id: int) -> None:
        """Checkpoint ids up to this one are used (the id counter moves past it, in the background)."""

    async def checkpoint_completed(
        self, checkpoint_id: int, external_path: str, checkpoint_type: str
    ) -> None:
        """Record the completed checkpoint durably; raises if that is not possible (e.g. deposed)."""


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

    async def advance_to(self, value: int) -> None:
        """Raise the counter to ``value`` if it is below (never lowers it)."""
        if await self.get() < value:
            await self.set_count(value)


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

    def get_completed_checkpoint_store(self, job_id: str) -> CompletedCheckpointStore:
        raise HighAvailabilityError(f"{type(self).__name__} keeps no completed checkpoints")

    @abc.abstractmethod
    async def close(self) -> None: ...

    async def close_and_cleanup_all_data(self) -> None:
        await self.close()
