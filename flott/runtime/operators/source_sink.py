"""The ends of a chain: reading a Source and writing a Sink (Flink's SourceOperator, SinkWriterOperator).

Connectors speak in batches (``SourceReader.poll_batch``,
``SinkWriter.write_batch``), so neither end adds per-record work.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flott.errors import InvalidJobGraphError
from flott.runtime.operators.stream_operator import OperatorSetup, StreamOperator


class SourceOperator(StreamOperator):
    """Head of a source task: owns this subtask's SourceReader."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        self._source = setup.load(setup.descriptor.function, "Source")
        if not callable(getattr(self._source, "create_reader", None)):
            raise InvalidJobGraphError(
                f"source '{self.name}': {type(self._source).__name__} has no "
                "create_reader(subtask, parallelism)"
            )
        self.reader: Any = None

    def open(self) -> None:
        env = self._setup.env
        self.reader = self._source.create_reader(env.subtask_index, env.parallelism)

    def poll_batch(self, max_records: int) -> list[Any] | None:
        """Up to ``max_records`` records, ``[]`` if none are ready, ``None`` when the source is exhausted."""
        return self.reader.poll_batch(max_records)

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        return batch if type(batch) is list else list(batch)

    def close(self) -> None:
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

    def open(self) -> None:
        env = self._setup.env
        self.writer = self._sink.create_writer(env.subtask_index, env.parallelism, self._input_type)

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        self.writer.write_batch(batch if type(batch) is list else list(batch))
        return []

    def end_input(self) -> list[Any]:
        self.writer.flush(True)
        return []

    def close(self) -> None:
        writer, self.writer = self.writer, None
        if writer is not None:
            writer.close()
