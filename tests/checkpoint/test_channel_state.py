"""Channel state (unaligned checkpoints) in the snapshot format and the restore plan."""

from __future__ import annotations

import pytest

from flott.errors import NotYetSupportedError, SnapshotFormatError
from flott.runtime.checkpoint import channel_state
from flott.runtime.checkpoint.metadata import (
    ChannelStateHandle,
    CheckpointMetadata,
    OperatorSubtaskState,
    decode_metadata,
    encode_metadata,
    merge_operator_states,
)
from flott.runtime.checkpoint.restore import restore_assignment


def _metadata() -> CheckpointMetadata:
    states = [
        OperatorSubtaskState(
            operator_id="op",
            subtask_index=i,
            parallelism=2,
            max_parallelism=8,
            channel_state=ChannelStateHandle(i, f"channel-state-op-{i}", 10, 1, 2),
        )
        for i in range(2)
    ]
    return CheckpointMetadata("job", 3, 0, False, "CHECKPOINT", merge_operator_states(states))


def test_channel_state_files_round_trip_and_are_named_by_the_snapshot() -> None:
    state = channel_state.encode_channel_state(3, {(0, 1): [b"a"], (0, 0): []}, {(1, 0): [b"b", b"c"]})
    back = channel_state.from_bytes(channel_state.to_bytes(state), "here")
    assert back == state and back.num_input_buffers == 1 and back.num_output_buffers == 2
    with pytest.raises(SnapshotFormatError):
        channel_state.from_bytes(b"junk", "here")
    metadata = decode_metadata(encode_metadata(_metadata()))
    assert "channel-state-op-1" in metadata.state_files()


def test_restore_gives_each_subtask_its_own_channel_state_and_refuses_rescaling() -> None:
    plan = restore_assignment(_metadata(), 2, "/snap")
    assert [r.channel_state for r in plan["op"]] == ["/snap/channel-state-op-0", "/snap/channel-state-op-1"]
    with pytest.raises(NotYetSupportedError, match="rescaling in-flight data is not supported"):
        restore_assignment(_metadata(), 3, "/snap")
