"""Restore from an unaligned checkpoint: its in-flight data goes first (Flink's channel state
recovery: the SequentialChannelStateReader fills the output subpartitions and input channels
before the task reads new input).

The operators' state was snapshotted on the checkpoint's first barrier, so what the subtask had
emitted but not yet delivered (output channel state) and what it had received but not yet seen
before each channel's barrier (input channel state) are part of the checkpoint but in no
operator's state. After the operators restored their state and opened:

1. the output batches are emitted on their ``(writer, subpartition)``, before any new output, so
   each consumer gets them first (the consumer restored from the same checkpoint, where they were
   after the barrier);
2. the input batches are pushed through the chain, per input (``gate``) in channel order, before
   the task reads its gates; what they produce is written out like any output.

The layout must match the job that wrote it (same outputs, same number of inputs and channels:
a restore at the same parallelism; restore.py refuses rescaling). A mismatch is a RestoreError.
"""

from __future__ import annotations

from collections.abc import Sequence

from flott.runtime.checkpoint import channel_state
from flott.runtime.checkpoint.errors import RestoreError
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from flott.runtime.execution.environment import InputEdgeGroup, TaskEnvironment
from flott.runtime.io.network.record_codec import deserialize
from flott.runtime.tasks.operator_chain import OperatorChain
from flott.runtime.tasks.record_writer import RecordWriterDelegate


def channel_state_path(env: TaskEnvironment) -> str | None:
    restore = env.restore
    if restore is None or not env.vertex.operators:
        return None
    head = restore.operators.get(env.vertex.operators[0].operator_id)
    return head.channel_state if head is not None else None


def replay_channel_state(
    env: TaskEnvironment,
    chain: OperatorChain,
    outputs: RecordWriterDelegate,
    inputs: Sequence[InputEdgeGroup],
) -> None:
    """Emit the restored output channel state, then process the restored input channel state."""
    path = channel_state_path(env)
    if path is None:
        return
    state = channel_state.from_bytes(FsspecCheckpointStorage().read(path), path)
    where = f"{env.task_name_with_subtasks}: channel state {path}"
    for entry in state.output:
        w, sub = entry.index
        if not (0 <= w < len(outputs.writers) and 0 <= sub < outputs.writers[w].num_channels):
            raise RestoreError(f"{where} has output {w} subpartition {sub}, which this task does not have")
        for payload in entry.buffers:
            outputs.writers[w].emit_restored(sub, deserialize(payload))
    processors = (chain.process, chain.process2)
    for entry in state.input:
        g, ch = entry.index
        if not (0 <= g < len(inputs) and 0 <= ch < inputs[g].gate.num_channels):
            raise RestoreError(f"{where} has input {g} channel {ch}, which this task does not have")
        for payload in entry.buffers:
            result = processors[g](deserialize(payload))
            if result:
                outputs.write(result)
