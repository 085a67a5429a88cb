"""The barrier handler's unaligned states and the input channel state recorder, without sockets.

An unaligned checkpoint starts on its first barrier (snapshot at once, nothing blocked), each
later barrier ends its channel's recording, savepoints stay aligned, and barriers the state does
not allow raise IllegalBarrierTransitionError.
"""

from __future__ import annotations

import pickle

import pytest

from flott.errors import IllegalBarrierTransitionError, IllegalStateTransitionError
from flott.runtime.io.network.api import CheckpointBarrier
from flott.runtime.tasks.channel_state_recorder import InputChannelStateRecorder
from flott.runtime.tasks.checkpoint_barrier_aligner import CheckpointBarrierAligner, HandlerState


class FakeGate:
    def __init__(self, n: int) -> None:
        self.num_channels = n
        self.blocked: set[int] = set()

    def block_channel(self, channel: int) -> None:
        self.blocked.add(channel)

    def unblock_all(self) -> None:
        self.blocked.clear()


def barrier(cid: int, kind: str = "CHECKPOINT") -> CheckpointBarrier:
    return CheckpointBarrier(cid, 0, kind, f"/chk-{cid}")


class Events:
    def __init__(self) -> None:
        self.log: list[tuple[str, int, object]] = []

    def handler(self, gates: list[FakeGate]) -> CheckpointBarrierAligner:
        log = self.log
        return CheckpointBarrierAligner(
            gates,  # type: ignore[arg-type]
            lambda b: log.append(("aligned", b.checkpoint_id, None)),
            lambda cid, _r: log.append(("cancelled", cid, None)),
            unaligned=True,
            on_unaligned_started=lambda b: log.append(("started", b.checkpoint_id, None)),
            on_channel_barrier=lambda g, c, b: log.append(("channel", b.checkpoint_id, (g, c))),
            on_unaligned_done=lambda b: log.append(("done", b.checkpoint_id, None)),
        )


def test_unaligned_checkpoint_starts_on_the_first_barrier_and_blocks_nothing() -> None:
    events = Events()
    gates = [FakeGate(2), FakeGate(1)]
    handler = events.handler(gates)
    handler.on_barrier(0, 1, barrier(1))
    assert events.log[:1] == [("started", 1, None)], "the snapshot does not wait for the other channels"
    assert handler.state is HandlerState.UNALIGNED
    assert not gates[0].blocked and not gates[1].blocked
    handler.on_barrier(1, 0, barrier(1))
    handler.on_barrier(0, 0, barrier(1))
    assert events.log == [
        ("started", 1, None),
        ("channel", 1, (0, 1)),
        ("channel", 1, (1, 0)),
        ("channel", 1, (0, 0)),
        ("done", 1, None),
    ]
    assert handler.state is HandlerState.WAITING and handler.last_completed_id == 1


def test_savepoints_stay_aligned_with_unaligned_checkpoints_enabled() -> None:
    events = Events()
    gates = [FakeGate(2)]
    handler = events.handler(gates)
    handler.on_barrier(0, 0, barrier(3, "SAVEPOINT"))
    assert handler.state is HandlerState.ALIGNING and gates[0].blocked == {0}
    handler.on_barrier(0, 1, barrier(3, "SAVEPOINT"))
    assert events.log == [("aligned", 3, None)] and not gates[0].blocked


def test_an_ended_channel_completes_an_unaligned_checkpoint() -> None:
    events = Events()
    handler = events.handler([FakeGate(2)])
    handler.on_barrier(0, 0, barrier(1))
    handler.on_end_of_partition(0, 1)
    assert events.log[-1] == ("done", 1, None)


def test_a_newer_barrier_cancels_the_unaligned_checkpoint_in_progress() -> None:
    events = Events()
    handler = events.handler([FakeGate(2)])
    handler.on_barrier(0, 0, barrier(1))
    handler.on_barrier(0, 1, barrier(2))
    assert ("cancelled", 1, None) in events.log and ("started", 2, None) in events.log
    handler.on_barrier(0, 1, barrier(1))  # the cancelled one's late barrier: ignored
    handler.on_barrier(0, 0, barrier(2))
    assert events.log[-1] == ("done", 2, None)


def test_illegal_barriers_raise_typed_errors() -> None:
    events = Events()
    handler = events.handler([FakeGate(3)])
    handler.on_barrier(0, 0, barrier(1))
    with pytest.raises(IllegalBarrierTransitionError, match="twice"):
        handler.on_barrier(0, 0, barrier(1))
    handler.on_end_of_partition(0, 2)
    with pytest.raises(IllegalBarrierTransitionError, match="already ended"):
        handler.on_barrier(0, 2, barrier(1))
    assert issubclass(IllegalBarrierTransitionError, IllegalStateTransitionError)


def test_unaligned_needs_exactly_once_and_its_callbacks() -> None:
    with pytest.raises(ValueError, match="EXACTLY_ONCE"):
        CheckpointBarrierAligner([], print, print, blocking=False, unaligned=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="callbacks"):
        CheckpointBarrierAligner([], print, print, unaligned=True)  # type: ignore[arg-type]


def test_recorder_keeps_what_precedes_each_channels_barrier() -> None:
    rec = InputChannelStateRecorder(pickle.dumps)
    rec.start(5, [(0, 0), (0, 1)])
    # Channel (0,0) delivered the first barrier, which overtook 2 items in the consumer's queue.
    rec.on_barrier((0, 0), 5, overtaken=2)
    rec.on_item((0, 1), ["b1"])  # before channel (0,1)'s barrier: recorded
    rec.on_item((0, 0), ["a1"])  # overtaken: recorded
    rec.on_item((0, 0), "watermark")  # overtaken event: counted, not kept
    rec.on_item((0, 0), ["a2"])  # after the overtaken ones: not recorded
    rec.barriers_done()
    assert not rec.complete, "channel (0,1)'s barrier is still to come"
    rec.on_barrier((0, 1), 5, overtaken=0)
    assert rec.complete
    state = rec.finish()
    assert {k: [pickle.loads(b) for b in v] for k, v in state.items()} == {(0, 0): [["a1"]], (0, 1): [["b1"]]}
    assert not rec.active


def test_recorder_refuses_illegal_moves() -> None:
    rec = InputChannelStateRecorder(pickle.dumps)
    rec.start(1, [(0, 0), (0, 1)])
    with pytest.raises(IllegalBarrierTransitionError):
        rec.start(2, [(0, 0)])
    rec.on_barrier((0, 0), 1, 0)
    with pytest.raises(IllegalBarrierTransitionError):
        rec.on_barrier((0, 0), 1, 0)
    with pytest.raises(IllegalBarrierTransitionError, match="not complete"):
        rec.finish()
    rec.on_end_of_partition((0, 1))
    rec.barriers_done()
    assert rec.finish() == {}


class SelfRecording:
    """A channel source whose channel (0, 1) records itself (a remote channel)."""

    def __init__(self) -> None:
        self.started: list[tuple[tuple[int, int], bool]] = []

    def start_recording(self, channel: tuple[int, int], after_barrier: bool) -> bool:
        self.started.append((channel, after_barrier))
        return channel == (0, 1)

    def take_recording(self, channel: tuple[int, int]) -> list[bytes]:
        return [pickle.dumps(["arrived"])]

    def overtaken(self, channel: tuple[int, int]) -> int:
        return 0


def test_self_recording_channels_are_collected_when_their_barrier_is_polled() -> None:
    source = SelfRecording()
    rec = InputChannelStateRecorder(pickle.dumps, source)
    rec.start(1, [(0, 0), (0, 1)], first=(0, 0))
    assert sorted(source.started) == [((0, 0), True), ((0, 1), False)]
    rec.on_barrier((0, 0), 1)
    rec.on_item((0, 1), ["polled, recorded by the channel already"])
    rec.on_barrier((0, 1), 1)
    rec.barriers_done()
    assert rec.complete, "nothing is left to process before the channel state is complete"
    assert {k: [pickle.loads(b) for b in v] for k, v in rec.finish().items()} == {(0, 1): [["arrived"]]}
