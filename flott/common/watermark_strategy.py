"""``WatermarkStrategy`` and ``TimestampAssigner``, kept as plain data for the event-time runtime.

The strategy is built on the client and shipped inside the JobGraph; the
source operator reads :attr:`WatermarkStrategy.kind`,
:attr:`~WatermarkStrategy.max_out_of_orderness_ms`, :attr:`~WatermarkStrategy.idleness_ms`
and :attr:`~WatermarkStrategy.timestamp_assigner` to generate watermarks. Every
``with_*`` call returns a new strategy, as in Flink, so a shared base strategy
is never mutated by one of its users.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flott.common.time import Duration
from flott.errors import NotYetSupportedError

__all__ = ["TimestampAssigner", "WatermarkGenerator", "WatermarkOutput", "WatermarkStrategy"]


class TimestampAssigner(abc.ABC):
    """Extracts the event timestamp (epoch milliseconds) from a record."""

    @abc.abstractmethod
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        """``record_timestamp`` is the record's current timestamp, or a negative value if none."""


class WatermarkOutput(abc.ABC):
    """Where a WatermarkGenerator emits (Flink's ``WatermarkOutput``); the runtime gives one."""

    @abc.abstractmethod
    def emit_watermark(self, timestamp: int) -> None:
        """Event time reached ``timestamp`` (ignored unless it advances the last one emitted)."""


class WatermarkGenerator(abc.ABC):
    """Flink's ``WatermarkGenerator``: sees every record and may emit a watermark right after it
    (``on_event``) or on the periodic tick (``on_periodic_emit``, ``pipeline.auto-watermark-interval``).
    A watermark emitted in ``on_event`` follows that record downstream, before the next one."""

    @abc.abstractmethod
    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None: ...

    @abc.abstractmethod
    def on_periodic_emit(self, output: WatermarkOutput) -> None: ...


@dataclass(frozen=True)
class WatermarkAlignment:
    """Parameters of ``with_watermark_alignment`` (watermark group and allowed drift)."""

    watermark_group: str
    max_allowed_watermark_drift_ms: int
    update_interval_ms: int


class WatermarkStrategy:
    """How a source generates watermarks. Kinds: ``NO_WATERMARKS``, ``MONOTONOUS``,
    ``BOUNDED_OUT_OF_ORDERNESS`` (watermark = max timestamp - out-of-orderness - 1), ``GENERATOR``
    (a WatermarkGenerator made per subtask by ``watermark_generator_supplier``: Java Flink's
    ``forGenerator``, which PyFlink does not expose; flott's SQL watermarks use it)."""

    NO_WATERMARKS = "NO_WATERMARKS"
    MONOTONOUS = "MONOTONOUS"
    BOUNDED_OUT_OF_ORDERNESS = "BOUNDED_OUT_OF_ORDERNESS"
    GENERATOR = "GENERATOR"

    def __init__(
        self,
        kind: str = NO_WATERMARKS,
        max_out_of_orderness_ms: int = 0,
        idleness_ms: int | None = None,
        timestamp_assigner: TimestampAssigner | None = None,
        alignment: WatermarkAlignment | None = None,
        watermark_generator_supplier: Callable[[], WatermarkGenerator] | None = None,
    ) -> None:
        if kind not in (self.NO_WATERMARKS, self.MONOTONOUS, self.BOUNDED_OUT_OF_ORDERNESS, self.GENERATOR):
            raise ValueError(f"unknown watermark strategy kind {kind!r}")
        if max_out_of_orderness_ms < 0:
            raise ValueError("max out-of-orderness must not be negative")
        self.kind = kind
        self.max_out_of_orderness_ms = max_out_of_orderness_ms
        self.idleness_ms = idleness_ms
        self.timestamp_assigner = timestamp_assigner
        self.alignment = alignment
        if (kind == self.GENERATOR) != (watermark_generator_supplier is not None):
            raise ValueError("a GENERATOR strategy, and only one, has a watermark generator supplier")
        self.watermark_generator_supplier = watermark_generator_supplier

    def _with(self, **changes: Any) -> WatermarkStrategy:
        fields: dict[str, Any] = {
            "kind": self.kind,
            "max_out_of_orderness_ms": self.max_out_of_orderness_ms,
            "idleness_ms": self.idleness_ms,
            "timestamp_assigner": self.timestamp_assigner,
            "alignment": self.alignment,
            "watermark_generator_supplier": self.watermark_generator_supplier,
        }
        fields.update(changes)
        return WatermarkStrategy(**fields)

    def with_timestamp_assigner(self, timestamp_assigner: TimestampAssigner) -> WatermarkStrategy:
        return self._with(timestamp_assigner=timestamp_assigner)

    def with_idleness(self, idle_timeout: Duration) -> WatermarkStrategy:
        return self._with(idleness_ms=idle_timeout.to_millis())

    def with_watermark_alignment(
        self,
        watermark_group: str,
        max_allowed_watermark_drift: Duration,
        update_interval: Duration | None = None,
    ) -> WatermarkStrategy:
        """Refused: flott's sources do not pause on watermark drift, so an aligned group would
        silently run unaligned. Flink's alignment needs split-level source pausing, not built yet."""

        raise NotYetSupportedError(
            f"watermark alignment (group '{watermark_group}') is not supported: flott sources do not "
            "pause when their watermarks drift apart; remove with_watermark_alignment()"
        )

    @staticmethod
    def for_monotonous_timestamps() -> WatermarkStrategy:
        return WatermarkStrategy(WatermarkStrategy.MONOTONOUS)

    @staticmethod
    def for_bounded_out_of_orderness(max_out_of_orderness: Duration) -> WatermarkStrategy:
        return WatermarkStrategy(WatermarkStrategy.BOUNDED_OUT_OF_ORDERNESS, max_out_of_orderness.to_millis())

    @staticmethod
    def for_generator(supplier: Callable[[], WatermarkGenerator]) -> WatermarkStrategy:
        """Watermarks from a WatermarkGenerator, one made by ``supplier`` per subtask."""
        return WatermarkStrategy(WatermarkStrategy.GENERATOR, watermark_generator_supplier=supplier)

    @staticmethod
    def no_watermarks() -> WatermarkStrategy:
        return WatermarkStrategy(WatermarkStrategy.NO_WATERMARKS)

    def generates_watermarks(self) -> bool:
        return self.kind != self.NO_WATERMARKS

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WatermarkStrategy) and (
            self.kind,
            self.max_out_of_orderness_ms,
            self.idleness_ms,
            self.timestamp_assigner,
            self.alignment,
            self.watermark_generator_supplier,
        ) == (
            other.kind,
            other.max_out_of_orderness_ms,
            other.idleness_ms,
            other.timestamp_assigner,
            other.alignment,
            other.watermark_generator_supplier,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.max_out_of_orderness_ms, self.idleness_ms))

    def __repr__(self) -> str:
        return (
            f"WatermarkStrategy(kind={self.kind}, max_out_of_orderness_ms={self.max_out_of_orderness_ms}, "
            f"idleness_ms={self.idleness_ms}, timestamp_assigner={self.timestamp_assigner!r})"
        )
