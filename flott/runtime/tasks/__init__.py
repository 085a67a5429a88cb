"""Tasks: the per-subtask main loop, its operator chain and its record writers."""

from flott.runtime.tasks.operator_chain import OperatorChain
from flott.runtime.tasks.record_writer import RecordWriter, RecordWriterDelegate
from flott.runtime.tasks.stream_task import StreamTask

__all__ = ["OperatorChain", "RecordWriter", "RecordWriterDelegate", "StreamTask"]
