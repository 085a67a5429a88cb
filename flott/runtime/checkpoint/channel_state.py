"""The file of one subtask's in-flight data in an unaligned checkpoint (Flink's channel state,
written by its ChannelStateWriter next to the operator state).

Input side: per input channel ``(gate, channel)``, the record batches it delivered after the
checkpoint's first barrier and before its own (plus those its barrier overtook in the consumer's
queue), oldest first. Output side: per output ``(writer, subpartition)``, the batches the
barrier overtook in the subpartition plus the records still buffered in the task's record
writer, oldest first. Each batch is a network payload (flott.runtime.io.network.record_codec
decodes it: a pickle or a typed encoding), so a batch is stored exactly as it travels.

On restore the input batches are processed before any new input and the output batches are
sent before any new output, which is what makes the checkpoint exactly once although its
operators' snapshot was taken before all of their input had arrived.
"""

from __future__ import annotations

import msgspec

from flott.runtime.checkpoint.errors import SnapshotFormatError

CHANNEL_STATE_FORMAT = 1


class ChannelBuffers(msgspec.Struct, array_like=True, frozen=True):
    """The batches of one channel: ``index`` is (gate, channel) or (writer, subpartition)."""

    index: tuple[int, int]
    buffers: list[bytes]


class ChannelStateFile(msgspec.Struct, frozen=True):
    checkpoint_id: int
    input: list[ChannelBuffers] = []
    output: list[ChannelBuffers] = []
    format_version: int = CHANNEL_STATE_FORMAT

    @property
    def num_input_buffers(self) -> int:
        return sum(len(c.buffers) for c in self.input)

    @property
    def num_output_buffers(self) -> int:
        return sum(len(c.buffers) for c in self.output)


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(ChannelStateFile)


def channel_state_file(task_id: str, subtask_index: int) -> str:
    """The file's path inside the checkpoint's directory."""
    return f"channel-state-{task_id}-{subtask_index}"


def encode_channel_state(
    checkpoint_id: int,
    inputs: dict[tuple[int, int], list[bytes]],
    outputs: dict[tuple[int, int], list[bytes]],
) -> ChannelStateFile:
    return ChannelStateFile(
        checkpoint_id,
        input=[ChannelBuffers(k, v) for k, v in sorted(inputs.items()) if v],
        output=[ChannelBuffers(k, v) for k, v in sorted(outputs.items()) if v],
    )


def to_bytes(state: ChannelStateFile) -> bytes:
    return _encoder.encode(state)


def from_bytes(data: bytes, where: str) -> ChannelStateFile:
    try:
        state = _decoder.decode(data)
    except msgspec.DecodeError as e:
        raise SnapshotFormatError(f"{where}: not a channel state file: {e}") from None
    if state.format_version != CHANNEL_STATE_FORMAT:
        raise SnapshotFormatError(
            f"{where}: channel state format {state.format_version}, this flott reads {CHANNEL_STATE_FORMAT}"
        )
    return state
