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
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from flott.errors import InvalidJobGraphError
from flott.runtime.execution.environment import TaskEnvironment
from flott.runtime.operators.operator_factory import create_operator
from flott.runtime.operators.source_sink import SourceOperator
from flott.runtime.operators.stream_operator import OperatorSetup, StreamOperator

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


def compose_stages(operators: Sequence[StreamOperator]) -> list[Stage]:
    """Group ``operators`` into stages: lazy runs folded into the next consumer (or a final list)."""
    stages: list[Stage] = []
    pending: list[Transform] = []
    for op in operators:
        if op.lazy:
            pending.append(op.transform)
        else:
            stages.append(_stage(tuple(pending), op.process_batch))
            pending = []
    if pending:
        stages.append(_stage(tuple(pending), list))
    return stages


class OperatorChain:
    def __init__(
        self, source: SourceOperator | None, operators: list[StreamOperator], batch_size: int
    ) -> None:
        self.source = source
        self.operators = operators
        self._batch_size = batch_size
        self._stages = compose_stages(operators)
        self._opened: list[StreamOperator] = []
        self._closed = False

    @classmethod
    def build(cls, env: TaskEnvironment, *, streaming: bool, batch_size: int) -> OperatorChain:
        descriptors = env.vertex.operators
        if not descriptors:
            raise InvalidJobGraphError(f"vertex '{env.vertex.name}' has no operators")
        for position, descriptor in enumerate(descriptors):
            if descriptor.kind == "source" and position != 0:
                raise InvalidJobGraphError(
                    f"vertex '{env.vertex.name}': source '{descriptor.name}' must be the first operator"
                )
        claimed: set[str] = set()
        built = [create_operator(OperatorSetup(env, d, streaming, batch_size, claimed)) for d in descriptors]
        source: SourceOperator | None = None
        if isinstance(built[0], SourceOperator):
            source = built[0]
            built = built[1:]
        return cls(source, built, batch_size)

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
            rest = compose_stages(self.operators[index + 1 :])
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
