"""``PrintSink``: writes each record's text to stdout/stderr, like Flink's ``PrintSinkFunction``.

Line format, as Flink prints it: ``<text>`` at parallelism 1, ``<subtask+1>> <text>``
at parallelism > 1, ``<id>> <text>`` / ``<id>:<subtask+1>> <text>`` with a sink
identifier. The record text is :func:`flott.common.typeinfo.make_print_formatter` of the
declared type (Python ``str`` for undeclared streams, PyFlink's ``+I[a,1]`` for Rows).
One write and one flush per batch keep the cost per record low.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from flott.common.typeinfo import TypeInformation, format_lines, make_print_formatter
from flott.datastream.connectors.base import Sink, SinkWriter

__all__ = ["PrintSink", "print_prefix"]


def print_prefix(sink_identifier: str | None, subtask_index: int, parallelism: int) -> str:
    """The per-line prefix Flink's print sink uses for this subtask."""
    prefix = sink_identifier or ""
    if parallelism > 1:
        prefix = f"{prefix}:{subtask_index + 1}" if prefix else str(subtask_index + 1)
    return prefix + "> " if prefix else ""


class _PrintWriter:
    def __init__(self, prefix: str, to_stderr: bool, type_info: TypeInformation | None) -> None:
        self._prefix = prefix
        self._to_stderr = to_stderr
        self._fmt = make_print_formatter(type_info)

    def _stream(self) -> TextIO:
        # Looked up per batch: the TaskExecutor may redirect sys.stdout after the writer exists.
        return sys.stderr if self._to_stderr else sys.stdout

    def write_batch(self, records: list[Any]) -> None:
        if not records:
            return
        text = format_lines(records, self._fmt, self._prefix)
        stream = self._stream()
        stream.write(text)
        stream.flush()

    def flush(self, end_of_input: bool) -> None:
        self._stream().flush()

    def close(self) -> None:
        try:
            self._stream().flush()
        except ValueError:  # stream already closed at interpreter shutdown
            pass


class PrintSink(Sink):
    """Prints records to standard output (or standard error with ``to_stderr=True``)."""

    formats_in_python = True
    """PyFlink's one sink that formats records in Python, not in Java: the sink operator
    (:mod:`flott.runtime.operators.source_sink`) checks its input as ``print()`` sees it. An
    attribute rather than an ``isinstance`` check there, so the runtime imports no connector."""

    def __init__(self, sink_identifier: str | None = None, to_stderr: bool = False) -> None:
        self._sink_identifier = sink_identifier
        self._to_stderr = to_stderr

    def create_writer(self, subtask_index: int, parallelism: int, input_type: object | None) -> SinkWriter:
        type_info = input_type if isinstance(input_type, TypeInformation) else None
        return _PrintWriter(
            print_prefix(self._sink_identifier, subtask_index, parallelism), self._to_stderr, type_info
        )

    def __repr__(self) -> str:
        return f"PrintSink({self._sink_identifier!r}, to_stderr={self._to_stderr})"
