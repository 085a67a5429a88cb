"""The operators of one task, called one after another on each batch (Flink's OperatorChain).

A chain is linear: the JobGraph's vertex lists its operators in order, the
first may be a source, the last may be a sink. The operators are grouped into
*stages* once, at build time: each run of lazy operators (map, filter,
flat_map) is folded into the input of the next operator that consumes records
(a keyed reduce, a process function, a sink) or into a final ``list()``. So
``flat_map -> map -> reduce`` is one stage in which the reduce loop pulls each
record through C-level ``map``/``chain`` iterators, with no intermediate
lists. Processing a batch is a loop over the stages, stopping early when a
stage produces nothing.

Emissions outside a batch (timers and windows firing, watermarks) enter the
chain after the operator that made them, through a :class:`ChainingOutput`:
records run through the stages of the operators after it, a watermark is
handed to the next operator's ``process_watermark``; past the last operator
both reach the task (:meth:`OperatorChain.set_task_output`). Because each
operator forwards a watermark only after emitting what it fired, records and
watermarks leave the chain in the order Flink guarantees.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from flott.errors import InvalidJobGraphError
from flott.runtime.execution.environment import TaskEnvironment
from flott.runtime.operators.processing_time import ProcessingTimeService
from flott.runtime.operators.source_sink import SourceOperator
from flott.runtime.operators.stream_operator import OperatorSetup, Output, StreamOperator
from flott.runtime.operators.watermark import Watermark, WatermarkStatus
from flott.runtime.tasks.operator_factory import create_operator
from flott.runtime.tasks.record_writer import check_declared_input

log = logging.getLogger(__name__)

Stage = Callable[[Iterable[Any]], list[Any]]
Transform = Callable[[Iterable[Any]], Iterable[Any]]


def _stage(transforms: Sequence[Transform], consume: Stage) -> Stage:
    """``consume`` applied to the input piped lazily through ``transforms``."""
    if not transforms:
        return consume
    if len(transforms) == 1:
        (first,) = transforms

        def one(records: Iterable[Any]) -> list[Any]:
            return consume(first(records))

        return one
    if len(transforms) == 2:
        first, second = transforms

        def two(records: Iterable[Any]) -> list[Any]:
            return consume(second(first(records)))

        return two

    def many(records: Iterable[Any]) -> list[Any]:
        for transform in transforms:
            records = transform(records)
        return consume(records)

    return many


def compose_stages(operators: Sequence[StreamOperator], tail: Stage = list) -> list[Stage]:
    """Group ``operators`` into stages: lazy runs folded into the next consumer (or into ``tail``,
    which makes the chain's output list: ``list``, or the task's collector that lets the output
    flusher see records as a slow lazy operator yields them)."""
    stages: list[Stage] = []
    pending: list[Transform] = []
    for op in operators:
        if op.lazy:
            pending.append(op.transform)
        else:
            stages.append(_stage(tuple(pending), op.process_batch))
            pending = []
    if pending:
        stages.append(_stage(tuple(pending), tail))
    return stages


class ChainingOutput(Output):
    """The output of the operator at ``index``: everything goes to the operators after it."""

    __slots__ = ("_chain", "_next")

    def __init__(self, chain: OperatorChain, index: int) -> None:
        self._chain = chain
        self._next = index + 1

    def collect(self, records: list[Any]) -> None:
        if records:
            self._chain.push(self._next, records)

    def emit_watermark(self, timestamp: int) -> None:
        self._chain.push_watermark(self._next, timestamp)

    def emit_watermark_status(self, status: WatermarkStatus) -> None:
        self._chain.push_watermark_status(self._next, status)


_NO_WATERMARK = -(2**63)
"""Long.MIN_VALUE: what Flink's watermark gauges show before the first watermark."""


def _drop_event(event: object) -> None:
    """No task output wired (a chain used on its own): events have nowhere to go."""


class OperatorChain:
    def __init__(
        self,
        source: SourceOperator | None,
        operators: list[StreamOperator],
        batch_size: int,
        processing_time_service: ProcessingTimeService | None = None,
    ) -> None:
        self.source = source
        self.operators = operators
        self._batch_size = batch_size
        self.processing_time_service = (
            processing_time_service if processing_time_service is not None else ProcessingTimeService()
        )
        self._tail: Stage = list
        self._stages = self._head_stages()
        self._rest: list[list[Stage] | None] = [None] * (len(operators) + 1)
        """Stages of ``operators[i:]``, built when something is first pushed at ``i``."""
        self.watermarks: list[int] = [_NO_WATERMARK] * (len(operators) + 1)
        """Last watermark pushed at each position (Flink's per-operator WatermarkGauges)."""
        self._opened: list[StreamOperator] = []
        self._closed = False
        self._write: Callable[[list[Any]], None] = self._collect_unwired
        self._emit_event: Callable[[object], None] = _drop_event
        self.unwired_records: list[Any] = []
        """Records that reached the end of the chain before :meth:`set_task_output` (used alone)."""
        if source is not None:
            source.set_output(ChainingOutput(self, -1))
        for index, op in enumerate(operators):
            op.set_output(ChainingOutput(self, index))

    def _head_stages(self) -> list[Stage]:
        stages = compose_stages(self.operators, self._tail)
        if self.source is not None and self.source.transforms_records:
            stages.insert(0, self.source.process_batch)
        return stages

    def _collect_unwired(self, records: list[Any]) -> None:
        self.unwired_records.extend(records)

    def set_task_output(
        self, write: Callable[[list[Any]], None], emit_event: Callable[[object], None]
    ) -> None:
        """Where records and events leaving the last operator go (the task's record writers)."""
        self._write = write
        self._emit_event = emit_event

    def set_tail_collector(self, tail: Stage) -> None:
        """Build the chain's output lists with ``tail`` instead of ``list`` when its last operators
        are lazy (see :meth:`RecordWriterDelegate.collect_tail`). Called before any batch."""
        self._tail = tail
        self._stages = self._head_stages()
        self._rest = [None] * (len(self.operators) + 1)

    @classmethod
    def build(
        cls,
        env: TaskEnvironment,
        *,
        streaming: bool,
        batch_size: int,
        processing_time_service: ProcessingTimeService | None = None,
    ) -> OperatorChain:
        descriptors = env.vertex.operators
        if not descriptors:
            raise InvalidJobGraphError(f"vertex '{env.vertex.name}' has no operators")
        for position, descriptor in enumerate(descriptors):
            if descriptor.kind == "source" and position != 0:
                raise InvalidJobGraphError(
                    f"vertex '{env.vertex.name}': source '{descriptor.name}' must be the first operator"
                )
        claimed: set[str] = set()
        pts = processing_time_service if processing_time_service is not None else ProcessingTimeService()
        built = [
            create_operator(OperatorSetup(env, d, streaming, batch_size, claimed, pts)) for d in descriptors
        ]
        for operator, descriptor in zip(built, descriptors, strict=True):
            check_declared_input(operator, env, descriptor.config)
        source: SourceOperator | None = None
        if isinstance(built[0], SourceOperator):
            source = built[0]
            built = built[1:]
        chain = cls(source, built, batch_size, pts)
        env.metrics.watermarks[:] = chain.watermarks  # the task's metrics read the chain's slots
        chain.watermarks = env.metrics.watermarks
        return chain

    @property
    def all_operators(self) -> list[StreamOperator]:
        return ([self.source] if self.source is not None else []) + self.operators

    def open(self) -> None:
        """Open operators tail to head, as Flink does: whatever an operator emits finds its consumer open."""
        for op in reversed(self.all_operators):
            self._opened.insert(0, op)
            op.open()

    def process(self, batch: list[Any]) -> list[Any]:
        """Run a batch through every operator; the result (a list) goes to the task's outputs."""
        for stage in self._stages:
            batch = stage(batch)
            if not batch:
                return batch
        return batch

    def process2(self, batch: list[Any]) -> list[Any]:
        """A batch of the second input of the head (two-input) operator, then the rest of the chain."""
        out = self.operators[0].process_batch2(batch)
        if not out:
            return out
        for stage in self._rest_stages(1):
            out = stage(out)
            if not out:
                return out
        return out

    def process_watermark(self, timestamp: int) -> None:
        """Event time of the task's input reached ``timestamp`` (after the input valves)."""
        self.push_watermark(0, timestamp)

    def process_watermark_status(self, status: WatermarkStatus) -> None:
        self.push_watermark_status(0, status)

    # --- out-of-batch emissions -------------------------------------------------------------

    def _rest_stages(self, index: int) -> list[Stage]:
        stages = self._rest[index]
        if stages is None:
            stages = self._rest[index] = compose_stages(self.operators[index:], self._tail)
        return stages

    def push(self, index: int, records: list[Any]) -> None:
        """Run ``records`` through ``operators[index:]`` and hand the result to the task."""
        size = self._batch_size
        stages = self._rest_stages(index)
        for start in range(0, len(records), size):
            out = records[start : start + size] if len(records) > size else records
            for stage in stages:
                out = stage(out)
                if not out:
                    break
            if out:
                self._write(out)

    def push_watermark(self, index: int, timestamp: int) -> None:
        self.watermarks[index] = timestamp
        if index < len(self.operators):
            self.operators[index].process_watermark(timestamp)
        else:
            self._emit_event(Watermark(timestamp))

    def push_watermark_status(self, index: int, status: WatermarkStatus) -> None:
        if index < len(self.operators):
            self.operators[index].process_watermark_status(status)
        else:
            self._emit_event(status)

    def end_input2(self) -> None:
        """The second input of the head (two-input) operator ended; what it emits runs on through
        the chain via its output."""
        self.operators[0].end_input2()

    def end_input(self) -> Iterator[list[Any]]:
        """End of input, head to tail: each operator's final output runs through the rest of the chain.

        Yields chain outputs in chunks of at most ``batch_size`` records, so a
        BATCH-mode aggregate over millions of keys does not become one list.
        """
        size = self._batch_size
        for index, op in enumerate(self.operators):
            produced = op.end_input()
            if not produced:
                continue
            rest = self._rest_stages(index + 1)
            for start in range(0, len(produced), size):
                out = produced[start : start + size]
                for stage in rest:
                    out = stage(out)
                    if not out:
                        break
                if out:
                    yield out

    def close(self) -> None:
        """Close every opened operator head to tail; the first error is raised after all were closed."""
        if self._closed:
            return
        self._closed = True
        first: BaseException | None = None
        for op in self._opened:
            try:
                op.close()
            except Exception as e:
                if first is None:
                    first = e
                else:
                    log.warning("closing %r failed as well: %r", op, e)
        if first is not None:
            raise first

    def close_quietly(self) -> None:
        """Close after a failure or cancel: errors are logged, the original failure is what counts."""
        try:
            self.close()
        except Exception as e:
            log.warning("closing operators after failure raised %s: %s", type(e).__name__, e)
