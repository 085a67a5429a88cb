"""The ends of a chain: reading a Source and writing a Sink (Flink's SourceOperator, SinkWriterOperator).

Connectors speak in batches (``SourceReader.poll_batch``,
``SinkWriter.write_batch``), so neither end adds per-record work.

Event time starts at a source given a WatermarkStrategy with a timestamp
assigner (``from_source(source, strategy, name)``): the source operator pairs
records with timestamps and generates watermarks per subtask. A sink on an
event-time path drops the timestamps before handing records to the writer.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from flott.errors import InvalidJobGraphError
from flott.runtime.operators.specs import SourceWithWatermarks
from flott.runtime.operators.stream_operator import DeferredOutput, OperatorSetup, StreamOperator
from flott.runtime.operators.timestamps_watermarks import (
    TimestampsAndWatermarks,
    auto_watermark_interval_ms,
)

_value = itemgetter(0)


class SourceOperator(StreamOperator):
    """Head of a source task: owns this subtask's SourceReader (and its watermark generation)."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        loaded = setup.load(setup.descriptor.function, "Source")
        strategy = None
        if isinstance(loaded, SourceWithWatermarks):
            loaded, strategy = loaded.source, loaded.watermark_strategy
        self._source = loaded
        if not callable(getattr(self._source, "create_reader", None)):
            raise InvalidJobGraphError(
                f"source '{self.name}': {type(self._source).__name__} has no "
                "create_reader(subtask, parallelism)"
            )
        self.reader: Any = None
        self.timestamps = TimestampsAndWatermarks(
            strategy,
            DeferredOutput(self),
            setup.processing_time_service,
            auto_watermark_interval_ms(setup.env.job_config),
            timestamped_input=False,
        )
        self.transforms_records = setup.timestamped_output
        """True: records leave as ``(value, timestamp)`` pairs (process_batch is a chain stage)."""

    def open(self) -> None:
        env = self._setup.env
        self.reader = self._source.create_reader(env.subtask_index, env.parallelism)
        self.timestamps.open(self._setup.runtime_context(None))

    def emit_final_watermark(self) -> None:
        """The bounded input ended: ``Long.MAX_VALUE`` so every timer and window downstream fires."""
        self.timestamps.emit_final_watermark()

    def poll_batch(self, max_records: int) -> list[Any] | None:
        """Up to ``max_records`` records, ``[]`` if none are ready, ``None`` when the source is exhausted."""
        return self.reader.poll_batch(max_records)

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        if self.transforms_records:
            return self.timestamps.assign(batch)
        return batch if type(batch) is list else list(batch)

    def close(self) -> None:
        self.timestamps.close()
        reader, self.reader = self.reader, None
        if reader is not None:
            reader.close()


class SinkWriterOperator(StreamOperator):
    """Tail of a chain: hands each batch to this subtask's SinkWriter; emits nothing downstream."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        self._sink = setup.load(setup.descriptor.function, "Sink")
        if not callable(getattr(self._sink, "create_writer", None)):
            raise InvalidJobGraphError(
                f"sink '{self.name}': {type(self._sink).__name__} has no "
                "create_writer(subtask, parallelism, input_type)"
            )
        self._input_type = setup.load_optional(setup.descriptor.input_type)
        self.writer: Any = None
        self._strip_timestamps = setup.timestamped_input

    def open(self) -> None:
        env = self._setup.env
        self.writer = self._sink.create_writer(env.subtask_index, env.parallelism, self._input_type)

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        if self._strip_timestamps:
            self.writer.write_batch(list(map(_value, batch)))
        else:
            self.writer.write_batch(batch if type(batch) is list else list(batch))
        return []

    def end_input(self) -> list[Any]:
        self.writer.flush(True)
        return []

    def close(self) -> None:
        writer, self.writer = self.writer, None
        if writer is not None:
            writer.close()
