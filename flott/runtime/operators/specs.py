"""User objects the JobGraph generator bundles for one operator (plain data, pickled as one blob).

An OperatorDescriptor ships user code only in its blob slots (``function``,
``key_selector``, ...), and only those reach the TaskExecutor. An operator
that needs more than one user object in a slot gets one of these bundles.
This module imports nothing heavy: the client builds them, the runtime reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class SourceWithWatermarks:
    """``from_source(source, watermark_strategy, ...)``: the Source and its WatermarkStrategy."""

    source: Any
    watermark_strategy: Any


@dataclass
class KeySelectorPair:
    """The key selectors of both inputs of a keyed two-input operator (``connect(...).key_by(k1, k2)``).

    ``key_selector2`` is None for a keyed broadcast operator: only its first input is keyed.
    """

    key_selector1: Any
    key_selector2: Any


@dataclass
class CustomPartitionerSpec:
    """``partition_custom(partitioner, key_selector)``: the user objects of a ``custom`` edge."""

    partitioner: Any
    key_selector: Any


BROADCAST_STATE_NAMES = "broadcast_state_names"
"""Descriptor config key of the broadcast operators: names of the MapStateDescriptors given to
``broadcast(...)`` (the broadcast states every subtask keeps)."""

WINDOW_FUNCTION_KINDS = ("reduce", "aggregate", "apply", "process")


@dataclass
class WindowOperatorSpec:
    """Everything a window operator runs (Flink's ``WindowOperatorBuilder`` result).

    ``function_kind``: ``reduce`` (``reduce_function``, optionally followed by
    ``window_function`` on the one reduced value), ``aggregate``
    (``aggregate_function``, optionally ``window_function``), ``apply``
    (``window_function`` is a WindowFunction over all elements) or ``process``
    (``window_function`` is a ProcessWindowFunction over all elements).
    ``all_window``: ``window_all`` (functions take no key: AllWindowFunction,
    ProcessAllWindowFunction).
    """

    assigner: Any
    trigger: Any = None
    """None: the assigner's default trigger."""
    allowed_lateness_ms: int = 0
    late_data_tag: Any = None
    function_kind: str = "process"
    reduce_function: Any = None
    aggregate_function: Any = None
    window_function: Any = None
    all_window: bool = False
    description: dict[str, Any] = field(default_factory=dict)
