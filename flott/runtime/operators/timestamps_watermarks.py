"""Timestamp assignment and watermark generation (Flink's ``TimestampsAndWatermarksOperator``,
``BoundedOutOfOrdernessWatermarks``, ``WatermarksWithIdleness``).

A :class:`~flott.common.watermark_strategy.WatermarkStrategy` is plain data
shipped in the JobGraph. Here it becomes a :class:`TimestampsAndWatermarks`:
per batch it pairs each record with its timestamp (the user's
``TimestampAssigner``, or the timestamp the record already had) and notes the
largest timestamp; on a periodic wall-clock callback
(``pipeline.auto-watermark-interval``, 200 ms by default, 0 disables) it emits
the watermark ``max timestamp - out-of-orderness - 1`` if that advanced, or
marks the output idle when ``with_idleness`` is set and no record came for
that long. Sources use it directly (``from_source(..., strategy)``);
``assign_timestamps_and_watermarks`` is the operator around it.

Per record there is one user call (the assigner) inside a C-level ``map``;
the watermark is tracked per batch (``max`` of the batch's timestamps). A strategy made with
``for_generator`` instead calls its WatermarkGenerator per record: a watermark it emits right after
a record goes out after that record and before the next one (the records before it are handed on
first), as Flink's generators do; flott's SQL watermarks (``WATERMARK FOR``) are such generators.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import repeat
from operator import itemgetter
from typing import Any

from flott.configuration import parse_duration_ms
from flott.runtime.operators.processing_time import ProcessingTimeService, ScheduledCallback
from flott.runtime.operators.stream_operator import (
    DeferredOutput,
    OperatorSetup,
    Output,
    StreamOperator,
    close_user_function,
    open_user_function,
    user_method,
)
from flott.runtime.operators.watermark import ACTIVE, IDLE, LONG_MAX, LONG_MIN, WatermarkStatus

AUTO_WATERMARK_INTERVAL_KEY = "pipeline.auto-watermark-interval"
DEFAULT_AUTO_WATERMARK_INTERVAL_MS = 200

_value = itemgetter(0)
_timestamp = itemgetter(1)


def auto_watermark_interval_ms(config: dict[str, str]) -> int:
    """The job's periodic watermark interval in ms (0: periodic watermarks are off)."""
    raw = config.get(AUTO_WATERMARK_INTERVAL_KEY)
    if raw is None:
        return DEFAULT_AUTO_WATERMARK_INTERVAL_MS
    return max(parse_duration_ms(AUTO_WATERMARK_INTERVAL_KEY, raw), 0)


class BoundedOutOfOrdernessWatermarks:
    """Watermark = largest timestamp seen - ``out_of_orderness_ms`` - 1 (monotonous: bound 0)."""

    def __init__(self, out_of_orderness_ms: int) -> None:
        self.out_of_orderness_ms = out_of_orderness_ms
        # Start so that the first watermark is LONG_MIN, not an underflow below it.
        self.max_timestamp = LONG_MIN + out_of_orderness_ms + 1

    def on_event(self, timestamp: int) -> None:
        if timestamp > self.max_timestamp:
            self.max_timestamp = timestamp

    def current_watermark(self) -> int:
        return self.max_timestamp - self.out_of_orderness_ms - 1


class SplitWatermarks:
    """Watermarks per source split (Flink's per-split generation, e.g. per Kafka partition): the
    subtask's watermark is the smallest of its splits' ``max timestamp - out-of-orderness - 1``, so
    records of a partition that lags behind are not late because another partition ran ahead.
    A split without records yet holds the watermark back (idleness, if set, still applies to the
    whole subtask); a finished split no longer counts; a subtask without splits is idle."""

    def __init__(self, out_of_orderness_ms: int) -> None:
        self.out_of_orderness_ms = out_of_orderness_ms
        self._floor = LONG_MIN + out_of_orderness_ms + 1
        self.max_by_split: dict[Any, int] = {}

    def retain(self, splits: Iterable[Any]) -> None:
        """The reader's current splits: new ones start at the floor, finished ones are dropped."""
        current = self.max_by_split
        keep = set(splits)
        if keep != current.keys():
            self.max_by_split = {k: current.get(k, self._floor) for k in keep}

    def observe(self, splits: Iterable[Any], timestamps: Iterable[Any]) -> None:
        current = self.max_by_split
        for split, ts in zip(splits, timestamps, strict=True):
            if ts is not None and ts > current.get(split, LONG_MAX):
                current[split] = ts

    def current_watermark(self) -> int:
        if not self.max_by_split:
            return LONG_MIN
        return min(self.max_by_split.values()) - self.out_of_orderness_ms - 1


class IdlenessTimer:
    """Idle once no record came for ``timeout_ms`` of wall-clock time, checked at each periodic emit."""

    def __init__(self, timeout_ms: int, clock: Callable[[], int]) -> None:
        self.timeout_ms = timeout_ms
        self._clock = clock
        self._activity = 0
        self._seen_activity = 0
        self._quiet_since: int | None = None

    def activity(self) -> None:
        self._activity += 1

    def check_if_idle(self) -> bool:
        if self._activity != self._seen_activity:
            self._seen_activity = self._activity
            self._quiet_since = None
            return False
        now = self._clock()
        if self._quiet_since is None:
            self._quiet_since = now
            return False
        return now - self._quiet_since >= self.timeout_ms


class TimestampsAndWatermarks:
    """The runtime form of a WatermarkStrategy, emitting watermarks and status on an Output."""

    def __init__(
        self,
        strategy: Any,
        output: Output,
        processing_time_service: ProcessingTimeService,
        interval_ms: int,
        timestamped_input: bool,
    ) -> None:
        self._output = output
        self._pts = processing_time_service
        self._interval_ms = interval_ms
        self._timestamped_input = timestamped_input
        assigner = getattr(strategy, "timestamp_assigner", None) if strategy is not None else None
        self.assigner = assigner
        self._extract: Callable[[Any, int], int] | None = (
            None if assigner is None else user_method(assigner, "extract_timestamp", "timestamp assigner")
        )
        generates = strategy is not None and strategy.generates_watermarks()
        supplier = getattr(strategy, "watermark_generator_supplier", None) if generates else None
        self._event_generator: Any = None if supplier is None else supplier()
        """A user WatermarkGenerator (``for_generator``), called per record and per periodic tick."""
        self._generator: BoundedOutOfOrdernessWatermarks | None = (
            BoundedOutOfOrdernessWatermarks(int(strategy.max_out_of_orderness_ms)) if generates else None
        )
        idleness = getattr(strategy, "idleness_ms", None) if generates else None
        self._idleness = (
            IdlenessTimer(int(idleness), processing_time_service.get_current_processing_time)
            if idleness is not None and idleness > 0
            else None
        )
        self.split_watermarks: SplitWatermarks | None = None
        """Set by :meth:`use_split_watermarks`: watermarks from per-split maxima the source feeds."""
        self._timer: ScheduledCallback | None = None
        self.last_emitted = LONG_MIN
        self.idle = False
        self.finished = False

    def use_split_watermarks(self) -> SplitWatermarks | None:
        """Generate watermarks per split (the source operator then reports each batch's splits)."""
        if self._generator is None:
            return None
        self.split_watermarks = SplitWatermarks(self._generator.out_of_orderness_ms)
        return self.split_watermarks

    def open(self, runtime_context: Any) -> None:
        if self.assigner is not None:
            open_user_function(self.assigner, runtime_context)
        if self._event_generator is not None:
            open_user_function(self._event_generator, runtime_context)
        if self._generator is not None and self._interval_ms > 0:
            self._schedule(self._pts.get_current_processing_time())

    def close(self) -> None:
        self._cancel_timer()
        if self.assigner is not None:
            close_user_function(self.assigner)

    # --- per batch ------------------------------------------------------------------------------

    def assign(self, batch: Iterable[Any]) -> list[Any]:
        """``(value, timestamp)`` pairs of ``batch``; feeds the largest timestamp to the generator."""
        extract = self._extract
        if self._timestamped_input:
            pairs = batch if type(batch) is list else list(batch)
            if extract is None:
                timestamps: list[Any] = list(map(_timestamp, pairs))
                out = pairs
            else:
                values = list(map(_value, pairs))
                previous = [LONG_MIN if t is None else t for t in map(_timestamp, pairs)]
                timestamps = list(map(extract, values, previous))
                out = list(zip(values, timestamps, strict=True))
        else:
            values = batch if type(batch) is list else list(batch)
            if extract is None:
                return list(zip(values, repeat(None)))
            timestamps = list(map(extract, values, repeat(LONG_MIN)))
            out = list(zip(values, timestamps, strict=True))
        generator = self._generator
        if generator is not None and timestamps:
            if self._idleness is not None:
                self._idleness.activity()
            if self._event_generator is not None:
                return self._per_event(out)
            if self.split_watermarks is not None:
                return out  # the source operator feeds the per-split maxima
            try:
                newest = max(timestamps)
            except TypeError:  # None among them: records without a timestamp do not move time
                known = [t for t in timestamps if t is not None]
                if not known:
                    return out
                newest = max(known)
            if newest > generator.max_timestamp:
                generator.max_timestamp = newest
        return out

    def _per_event(self, pairs: list[Any]) -> list[Any]:
        """The generator sees each record; the records before a watermark it emits leave first."""
        on_event = self._event_generator.on_event
        output = _EventWatermarkOutput(self)
        for pair in pairs:
            output.pending.append(pair)
            on_event(pair[0], pair[1], output)
        return output.pending

    # --- watermarks -----------------------------------------------------------------------------

    def _schedule(self, now: int) -> None:
        self._timer = self._pts.register_timer(now + self._interval_ms, self._on_periodic)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _on_periodic(self, time_ms: int) -> None:
        self.emit_periodic()
        if not self.finished:
            self._schedule(max(time_ms, self._pts.get_current_processing_time()))

    def emit_periodic(self) -> None:
        """What a periodic tick emits: IDLE after the idle timeout, else the watermark if it advanced."""
        generator = self._generator
        if generator is None or self.finished:
            return
        if self._idleness is not None and self._idleness.check_if_idle():
            if not self.idle:
                self.idle = True
                self._output.emit_watermark_status(IDLE)
            return
        per_split = self.split_watermarks
        if per_split is not None and not per_split.max_by_split:
            if not self.idle:  # a reader without splits (more subtasks than partitions): idle, as Flink's
                self.idle = True
                self._output.emit_watermark_status(IDLE)
            return
        if self._event_generator is not None:
            self._event_generator.on_periodic_emit(self)
            return
        self.emit_watermark((generator if per_split is None else per_split).current_watermark())

    def emit_watermark(self, timestamp: int) -> None:
        if timestamp <= self.last_emitted:
            return
        if self.idle:
            self.idle = False
            self._output.emit_watermark_status(ACTIVE)
        self.last_emitted = timestamp
        self._output.emit_watermark(timestamp)

    def emit_final_watermark(self) -> None:
        """The input ended: ``Long.MAX_VALUE`` fires every remaining timer and window downstream."""
        self.emit_watermark(LONG_MAX)
        self.finished = True
        self._cancel_timer()


class _EventWatermarkOutput:
    """The WatermarkOutput of one batch's ``on_event`` calls: before a watermark goes out, the
    batch's records so far (``pending``) are handed on, so the watermark follows them."""

    __slots__ = ("_tw", "pending")

    def __init__(self, tw: TimestampsAndWatermarks) -> None:
        self._tw = tw
        self.pending: list[Any] = []

    def emit_watermark(self, timestamp: int) -> None:
        if timestamp <= self._tw.last_emitted:
            return
        if self.pending:
            records, self.pending = self.pending, []
            self._tw._output.collect(records)
        self._tw.emit_watermark(timestamp)


class TimestampsAndWatermarksOperator(StreamOperator):
    """``assign_timestamps_and_watermarks``: pairs records with timestamps and generates watermarks.

    Watermarks from upstream are swallowed (this operator defines event time from
    here on), except the final ``Long.MAX_VALUE`` one, as in Flink.
    """

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        strategy = setup.load(setup.descriptor.function, "WatermarkStrategy")
        self._tw = TimestampsAndWatermarks(
            strategy,
            DeferredOutput(self),
            setup.processing_time_service,
            auto_watermark_interval_ms(setup.env.job_config),
            setup.timestamped_input,
        )

    def open(self) -> None:
        self._tw.open(self._setup.runtime_context(None))

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        return self._tw.assign(batch)

    def process_watermark(self, timestamp: int) -> None:
        if timestamp == LONG_MAX:
            self.current_watermark = timestamp
            self._tw.emit_final_watermark()

    def process_watermark_status(self, status: WatermarkStatus) -> None:
        """Upstream idleness does not matter: this operator decides event time from here on."""

    def close(self) -> None:
        self._tw.close()
