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
from dataclasses import dataclass
from typing import Any

from flott.common.time import Duration
from flott.errors import NotYetSupportedError

__all__ = ["TimestampAssigner", "WatermarkStrategy"]


class TimestampAssigner(abc.ABC):
    """Extracts the event timestamp (epoch milliseconds) from a record."""

    @abc.abstractmethod
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        """``record_timestamp`` is the record's current timestamp, or a negative value if none."""


@dataclass(frozen=True)
class WatermarkAlignment:
    """Parameters of ``with_watermark_alignment`` (watermark group and allowed drift)."""

    watermark_group: str
    max_allowed_watermark_drift_ms: int
    update_interval_ms: int


class WatermarkStrategy:
    """How a source generates watermarks. Kinds: ``NO_WATERMARKS``, ``MONOTONOUS``,
    ``BOUNDED_OUT_OF_ORDERNESS`` (watermark = max timestamp - out-of-orderness - 1)."""

    NO_WATERMARKS = "NO_WATERMARKS"
    MONOTONOUS = "MONOTONOUS"
    BOUNDED_OUT_OF_ORDERNESS = "BOUNDED_OUT_OF_ORDERNESS"

    def __init__(
        self,
        kind: str = NO_WATERMARKS,
        max_out_of_orderness_ms: int = 0,
        idleness_ms: int | None = None,
        timestamp_assigner: TimestampAssigner | None = None,
        alignment: WatermarkAlignment | None = None,
    ) -> None:
        if kind not in (self.NO_WATERMARKS, self.MONOTONOUS, self.BOUNDED_OUT_OF_ORDERNESS):
            raise ValueError(f"unknown watermark strategy kind {kind!r}")
        if max_out_of_orderness_ms < 0:
            raise ValueError("max out-of-orderness must not be negative")
        self.kind = kind
        self.max_out_of_orderness_ms = max_out_of_orderness_ms
        self.idleness_ms = idleness_ms
        self.timestamp_assigner = timestamp_assigner
        self.alignment = alignment

    def _with(self, **changes: Any) -> WatermarkStrategy:
        fields: dict[str, Any] = {
            "kind": self.kind,
            "max_out_of_orderness_ms": self.max_out_of_orderness_ms,
            "idleness_ms": self.idleness_ms,
            "timestamp_assigner": self.timestamp_assigner,
            "alignment": self.alignment,
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
        ) == (
            other.kind,
            other.max_out_of_orderness_ms,
            other.idleness_ms,
            other.timestamp_assigner,
            other.alignment,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.max_out_of_orderness_ms, self.idleness_ms))

    def __repr__(self) -> str:
        return (
            f"WatermarkStrategy(kind={self.kind}, max_out_of_orderness_ms={self.max_out_of_orderness_ms}, "
            f"idleness_ms={self.idleness_ms}, timestamp_assigner={self.timestamp_assigner!r})"
        )
