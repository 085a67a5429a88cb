"""Barrier alignment over a task's input channels, driven without sockets."""

from __future__ import annotations

from flott.runtime.io.network.api import CheckpointBarrier
from flott.runtime.tasks.checkpoint_barrier_aligner import CheckpointBarrierAligner


class FakeGate:
    def __init__(self, n: int) -> None:
        self.num_channels = n
        self.blocked: set[int] = set()

    def block_channel(self, channel: int) -> None:
        self.blocked.add(channel)

    def unblock_all(self) -> None:
        self.blocked.clear()


def barrier(cid: int) -> CheckpointBarrier:
    return CheckpointBarrier(cid, 0, "CHECKPOINT", f"/chk-{cid}")


def make(*sizes: int) -> tuple[CheckpointBarrierAligner, list[FakeGate], list[int], list[int]]:
    gates = [FakeGate(n) for n in sizes]
    aligned: list[int] = []
    cancelled: list[int] = []
    aligner = CheckpointBarrierAligner(
        gates,  # type: ignore[arg-type]
        lambda b: aligned.append(b.checkpoint_id),
        lambda cid, _reason: cancelled.append(cid),
    )
    return aligner, gates, aligned, cancelled


def test_snapshot_once_every_channel_of_every_gate_delivered_the_barrier() -> None:
    aligner, gates, aligned, _ = make(2, 1)
    aligner.on_barrier(0, 1, barrier(1))
    assert gates[0].blocked == {1} and aligned == []
    aligner.on_barrier(1, 0, barrier(1))
    assert gates[1].blocked == {0} and aligned == []
    aligner.on_barrier(0, 0, barrier(1))
    assert aligned == [1]
    assert not gates[0].blocked and not gates[1].blocked, "channels flow again after the snapshot"


def test_an_ended_channel_no_longer_counts() -> None:
    aligner, _, aligned, _ = make(3)
    aligner.on_barrier(0, 0, barrier(1))
    aligner.on_end_of_partition(0, 2)
    assert aligned == []
    aligner.on_barrier(0, 1, barrier(1))
    assert aligned == [1]


def test_a_newer_barrier_cancels_an_incomplete_alignment() -> None:
    aligner, gates, aligned, cancelled = make(2)
    aligner.on_barrier(0, 0, barrier(1))
    aligner.on_barrier(0, 1, barrier(2))
    assert cancelled == [1] and gates[0].blocked == {1}
    aligner.on_barrier(0, 1, barrier(1))  # late: ignored
    aligner.on_barrier(0, 0, barrier(2))
    assert aligned == [2]


def test_abort_from_the_job_master_unblocks() -> None:
    aligner, gates, aligned, cancelled = make(2)
    aligner.on_barrier(0, 0, barrier(3))
    aligner.abort(3, "expired")
    assert cancelled == [3] and not gates[0].blocked
    aligner.on_barrier(0, 1, barrier(3))
    assert aligned == []


def test_at_least_once_never_blocks_a_channel_but_snapshots_when_every_barrier_arrived() -> None:
    gates = [FakeGate(2), FakeGate(1)]
    aligned: list[int] = []
    aligner = CheckpointBarrierAligner(
        gates,  # type: ignore[arg-type]
        lambda b: aligned.append(b.checkpoint_id),
        lambda cid, _reason: None,
        blocking=False,
    )
    aligner.on_barrier(0, 0, barrier(1))
    aligner.on_barrier(1, 0, barrier(1))
    assert not gates[0].blocked and not gates[1].blocked, "records after the barrier keep flowing"
    assert aligned == []
    aligner.on_barrier(0, 1, barrier(1))
    assert aligned == [1]


def test_at_least_once_still_aligns_savepoints() -> None:
    gates = [FakeGate(2)]
    aligner = CheckpointBarrierAligner(
        gates,  # type: ignore[arg-type]
        lambda b: None,
        lambda cid, _reason: None,
        blocking=False,
    )
    aligner.on_barrier(0, 0, CheckpointBarrier(1, 0, "SAVEPOINT", "/sp-1"))
    assert gates[0].blocked == {0}, "a savepoint is a consistent cut whatever the mode"
