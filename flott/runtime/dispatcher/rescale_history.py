"""A job's rescale history, kept by the Dispatcher: a pure record of events (times passed in).

Each ``PATCH /jobs/:id/rescaling`` the Dispatcher carries out is one rescale: :meth:`begin`
when it starts stopping the job with a savepoint (state ``StopWithSavepoint``), :meth:`enter`
when it starts the job again (``Restarting``), then :meth:`end` with ``COMPLETED`` or
``FAILED`` and the reason in Flink's terms. At most ``size`` rescales are kept
(``web.adaptive-scheduler.rescale-history.size``, Flink's key; 0 keeps none, and the
``/rescales`` routes then answer 404 as Flink's do); the counts and the duration statistics
cover every rescale since the job was first submitted, the durations over the last
:data:`DURATION_WINDOW` of each state.
"""

from __future__ import annotations

import collections
import uuid

import msgspec

from flott.runtime.jobgraph import JobGraph
from flott.runtime.messages.rescale import JobRescales, RescaleRecord, RescaleSpan, VertexRescale

HISTORY_SIZE_KEY = "web.adaptive-scheduler.rescale-history.size"
DURATION_WINDOW = 1000
TERMINAL_STATES = ("COMPLETED", "FAILED", "IGNORED")


class RescaleHistory:
    def __init__(self, size: int) -> None:
        self.size = size
        self._records: collections.OrderedDict[str, RescaleRecord] = collections.OrderedDict()
        self._latest: dict[str, RescaleRecord] = {}
        self._counts = {state: 0 for state in (*TERMINAL_STATES, "IN_PROGRESS")}
        self._durations: dict[str, collections.deque[int]] = {
            state: collections.deque(maxlen=DURATION_WINDOW) for state in TERMINAL_STATES
        }
        self._attempts = 0
        self._current: RescaleRecord | None = None
        """The latest rescale, also when ``size`` keeps none in the history."""

    def begin(self, job_graph: JobGraph, parallelism: int, now_ms: int) -> str:
        """A rescale of ``job_graph`` to ``parallelism`` starts; its uuid."""
        self._attempts += 1
        vertices = [
            VertexRescale(
                vertex_id=v.id,
                name=v.name,
                slot_sharing_group=v.slot_sharing_group,
                max_parallelism=v.max_parallelism,
                before=v.parallelism,
                after=max(1, min(parallelism, v.max_parallelism)),
            )
            for v in job_graph.vertices
        ]
        record = RescaleRecord(
            uuid=uuid.uuid4().hex,
            attempt=self._attempts,
            start_ms=now_ms,
            vertices=vertices,
            spans=[RescaleSpan(state="StopWithSavepoint", enter_ms=now_ms)],
        )
        self._counts["IN_PROGRESS"] += 1
        self._records[record.uuid] = record
        while len(self._records) > max(self.size, 0):
            self._records.popitem(last=False)
        self._current = record
        return record.uuid

    def _replace(self, record: RescaleRecord) -> None:
        self._current = record
        if record.uuid in self._records:
            self._records[record.uuid] = record

    def enter(self, rescale_uuid: str, state: str, now_ms: int) -> None:
        record = self._get(rescale_uuid)
        if record is None:
            return
        spans = [*record.spans[:-1], msgspec.structs.replace(record.spans[-1], leave_ms=now_ms)]
        spans.append(RescaleSpan(state=state, enter_ms=now_ms))
        self._replace(msgspec.structs.replace(record, spans=spans))

    def end(self, rescale_uuid: str, state: str, reason: str, now_ms: int, error: str | None = None) -> None:
        """The rescale is over: ``state`` COMPLETED or FAILED, ``reason`` Flink's TerminatedReason."""
        record = self._get(rescale_uuid)
        if record is None or record.terminal_state is not None:
            return
        last = msgspec.structs.replace(record.spans[-1], leave_ms=now_ms, error=error)
        done = msgspec.structs.replace(
            record,
            end_ms=now_ms,
            terminal_state=state,
            terminated_reason=reason,
            spans=[*record.spans[:-1], last],
        )
        self._replace(done)
        self._counts["IN_PROGRESS"] -= 1
        self._counts[state] += 1
        self._durations[state].append(done.duration_ms)
        self._latest[state] = done

    def _get(self, rescale_uuid: str) -> RescaleRecord | None:
        record = self._records.get(rescale_uuid)
        current = self._current
        if record is None and current is not None and current.uuid == rescale_uuid:
            return current  # not kept in the history (size 0), still counted
        return record

    def snapshot(self) -> JobRescales:
        return JobRescales(
            history_size=self.size,
            history=list(reversed(self._records.values())),
            latest=dict(self._latest),
            counts=dict(self._counts),
            durations_ms={state: list(d) for state, d in self._durations.items()},
        )
