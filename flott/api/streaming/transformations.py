"""Transformations: what DataStream calls record (Flink's ``Transformation`` classes).

A DataStream is a handle on one transformation; every API call creates a new
transformation pointing at its inputs, so a program becomes a DAG of these
plain objects. Nothing is pickled or validated against the cluster here: the
StreamGraph generator (``flott.graph``) walks the DAG at ``execute()`` time,
when the program has finished setting names, uids and parallelism.

Operator transformations (one-input operators and sinks) are registered with
the environment when created, as Flink registers them; sources and the virtual
transformations (partitioning, union, watermark assignment) are reached
through their consumers, so a source nobody reads is not part of the job.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

_ids = itertools.count(1)


class ChainingStrategy(Enum):
    """Whether an operator may be chained to its predecessor/successor (Flink's ChainingStrategy)."""

    ALWAYS = "ALWAYS"
    """Chain with predecessor and successor when the edge allows it (default of operators)."""
    HEAD = "HEAD"
    """Start a new chain here (``start_new_chain``); successors may still chain to it."""
    NEVER = "NEVER"
    """Never chain (``disable_chaining``)."""


@dataclass(eq=False)
class Transformation:
    """Base of all transformations; identity (not value) equality, like Flink's."""

    name: str
    parallelism: int | None = None
    """Set explicitly or captured from the environment at creation; None: the environment's default."""
    parallelism_configured: bool = False
    """``set_parallelism()`` was called (or the operator is non-parallel by nature). Flink's adaptive
    batch scheduler decides the parallelism of the others; the environment's parallelism (captured
    above) does not count as configured."""
    max_parallelism: int | None = None
    uid: str | None = None
    uid_hash: str | None = None
    description: str | None = None
    slot_sharing_group: Any = None
    """A group name, a SlotSharingGroup object, or None (inherit from inputs)."""
    chaining_strategy: ChainingStrategy = ChainingStrategy.ALWAYS
    buffer_timeout: int | None = None
    output_type: Any = None
    """Declared TypeInformation of the records produced, or None (pickled Python objects)."""
    id: int = field(default_factory=lambda: next(_ids))

    @property
    def inputs(self) -> list[Transformation]:
        return []

    @property
    def is_virtual(self) -> bool:
        """Virtual transformations become edge properties, not StreamGraph nodes."""
        return False


@dataclass(eq=False)
class SourceTransformation(Transformation):
    """A Source object (connector contract) read by ``parallelism`` subtasks."""

    source: Any = None
    watermark_strategy: Any = None
    non_parallel: bool = False
    """from_collection and legacy non-parallel source functions: parallelism is fixed at 1."""


@dataclass(eq=False)
class OneInputTransformation(Transformation):
    """A one-input operator: ``kind`` is the runtime operator kind (map, reduce, ...)."""

    input: Transformation | None = None
    kind: str = ""
    function: Any = None
    key_selector: Any = None
    """Set on operators applied to a KeyedStream (they get keyed state and the current key)."""
    operator_config: dict[str, Any] = field(default_factory=dict)

    @property
    def inputs(self) -> list[Transformation]:
        return [self.input] if self.input is not None else []


@dataclass(eq=False)
class SinkTransformation(Transformation):
    """A Sink object (connector contract) fed by ``input``."""

    input: Transformation | None = None
    sink: Any = None

    @property
    def inputs(self) -> list[Transformation]:
        return [self.input] if self.input is not None else []


@dataclass(eq=False)
class PartitionTransformation(Transformation):
    """How records reach the consumer: ``partitioner`` is a JobGraph partitioner kind."""

    input: Transformation | None = None
    partitioner: str = "forward"
    key_selector: Any = None
    key_type: Any = None

    @property
    def inputs(self) -> list[Transformation]:
        return [self.input] if self.input is not None else []

    @property
    def is_virtual(self) -> bool:
        return True


@dataclass(eq=False)
class UnionTransformation(Transformation):
    union_inputs: list[Transformation] = field(default_factory=list)

    @property
    def inputs(self) -> list[Transformation]:
        return list(self.union_inputs)

    @property
    def is_virtual(self) -> bool:
        return True


@dataclass(eq=False)
class TimestampsAndWatermarksTransformation(Transformation):
    """Records ``assign_timestamps_and_watermarks``: an operator (chained to its input when it can)
    that assigns timestamps and generates watermarks from here on."""

    input: Transformation | None = None
    watermark_strategy: Any = None

    @property
    def inputs(self) -> list[Transformation]:
        return [self.input] if self.input is not None else []


@dataclass(eq=False)
class TwoInputTransformation(Transformation):
    """A two-input operator (``connect(...).map/flat_map/process``); ``kind`` as for one input.

    ``key_selector1``/``key_selector2`` are set when both inputs are keyed.
    """

    input1: Transformation | None = None
    input2: Transformation | None = None
    kind: str = ""
    function: Any = None
    key_selector1: Any = None
    key_selector2: Any = None
    operator_config: dict[str, Any] = field(default_factory=dict)

    @property
    def inputs(self) -> list[Transformation]:
        return [t for t in (self.input1, self.input2) if t is not None]


@dataclass(eq=False)
class SideOutputTransformation(Transformation):
    """``get_side_output(tag)``: the records ``input``'s operator emitted to ``output_tag``."""

    input: Transformation | None = None
    output_tag: Any = None

    @property
    def inputs(self) -> list[Transformation]:
        return [self.input] if self.input is not None else []

    @property
    def is_virtual(self) -> bool:
        return True
