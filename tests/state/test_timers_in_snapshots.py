"""Timers are in snapshots: pending event-time and processing-time timers of a keyed process
function and of window operators survive snapshot and restore, on either backend, at the same or
another parallelism, and fire with the right keys and windows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flott.datastream.functions import KeyedProcessFunction, ProcessWindowFunction
from flott.datastream.state import ValueStateDescriptor
from flott.datastream.window import TumblingEventTimeWindows, TumblingProcessingTimeWindows
from flott.runtime.checkpoint.metadata import CheckpointMetadata, merge_operator_states
from flott.runtime.checkpoint.restore import restore_assignment
from flott.runtime.checkpoint.snapshot import (
    key_group_blobs,
    read_key_group,
    restore_keyed_backend,
    snapshot_keyed_backend,
)
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from flott.runtime.operators import OperatorSetup, StreamOperator
from flott.runtime.operators.processing_time import ProcessingTimeService
from flott.runtime.operators.specs import WindowOperatorSpec
from flott.runtime.operators.state_backend_loader import create_keyed_state_backend
from flott.runtime.operators.stream_operator import TIMESTAMPED_INPUT, TIMESTAMPED_OUTPUT, CollectingOutput
from flott.runtime.operators.timer_service import InternalTimerService
from flott.runtime.operators.watermark import LONG_MAX
from flott.runtime.state.key_groups import KeyGroupRange, assign_to_key_group
from flott.runtime.tasks.operator_factory import create_operator
from tests.operators.task_harness import Blobs, make_env, op, vertex
from tests.windowing.harness import Clock

MAX_PAR = 128
KEYS = [f"k{i}" for i in range(20)]


@pytest.fixture(autouse=True)
def configured_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Operators get the backend ``state.backend.type`` names (what the runtime wiring will do)."""

    def keyed_state_backend(self: OperatorSetup) -> Any:
        env = self.env
        return create_keyed_state_backend(
            env.job_config,
            env.max_parallelism,
            KeyGroupRange.of_operator(env.max_parallelism, env.parallelism, env.subtask_index),
            operator_id=self.descriptor.operator_id,
            subtask_index=env.subtask_index,
        )

    monkeypatch.setattr(OperatorSetup, "keyed_state_backend", keyed_state_backend)


class Subtask:
    """One operator of one subtask, driven by hand (records, watermarks, a hand-made clock)."""

    def __init__(self, blobs: Blobs, descriptor: Any, parallelism: int, index: int, config: dict[str, str]):
        self.env = make_env(
            vertex("v", parallelism, descriptor, max_parallelism=MAX_PAR), blobs, subtask=index, config=config
        )
        self.clock = Clock(1_000_000)
        self.pts = ProcessingTimeService(self.clock)
        self.operator: StreamOperator = create_operator(
            OperatorSetup(self.env, descriptor, True, 1024, set(), self.pts)
        )
        self.output = CollectingOutput()
        self.operator.set_output(self.output)
        self.operator.open()

    @property
    def backend(self) -> Any:
        return self.operator.backend  # type: ignore[attr-defined]

    def process(self, *records: Any) -> list[Any]:
        return self.operator.process_batch(list(records))

    def watermark(self, timestamp: int) -> list[Any]:
        self.operator.process_watermark(timestamp)
        return self.output.take()

    def processing_time(self, now: int) -> list[Any]:
        self.clock.now = now
        self.pts.fire_due()
        return self.output.take()


class Timers(KeyedProcessFunction):
    """Counts elements per key; an event-time timer at ts+100 and a processing-time one at now+500."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", None))

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        self.count.update((self.count.value() or 0) + 1)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 100)
        ctx.timer_service().register_processing_time_timer(
            ctx.timer_service().current_processing_time() + 500
        )
        return []

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
        yield (ctx.time_domain().name, timestamp, ctx.get_current_key(), self.count.value())


class Contents(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        w = context.window()
        yield key, w.start, w.end, sorted(v for _, v in elements)


def snapshot_and_plan(
    tmp_path: Path, subtasks: list[Subtask], operator_id: str, new_parallelism: int
) -> tuple[FsspecCheckpointStorage, list[Any]]:
    """Snapshot every subtask's backend, write nothing else, plan the restore at ``new_parallelism``."""
    storage = FsspecCheckpointStorage()
    snapshot_dir = str(tmp_path / "chk-1")
    states = [
        snapshot_keyed_backend(
            storage,
            snapshot_dir,
            s.backend,
            operator_id=operator_id,
            subtask_index=s.env.subtask_index,
            parallelism=len(subtasks),
        )
        for s in subtasks
    ]
    metadata = CheckpointMetadata(
        job_id="j", checkpoint_id=1, timestamp=0, is_savepoint=False, checkpoint_type="CHECKPOINT",
        operators=merge_operator_states(states),
    )  # fmt: skip
    return storage, restore_assignment(metadata, new_parallelism, snapshot_dir)[operator_id]


def restore_into(
    storage: FsspecCheckpointStorage, plan: list[Any], make: Any, config: dict[str, str]
) -> list[Subtask]:
    restored = []
    for sub in plan:
        subtask = make(len(plan), sub.subtask_index, config)
        assert subtask.backend.key_group_range == sub.key_group_range
        restore_keyed_backend(storage, subtask.backend, sub.key_group_files)
        restored.append(subtask)
    return restored


BACKEND_PAIRS = [
    ("hashmap", "hashmap"),
    ("rocksdb", "rocksdb"),
    ("hashmap", "rocksdb"),
    ("rocksdb", "hashmap"),
]


def config_of(backend: str, tmp_path: Path) -> dict[str, str]:
    return {
        "state.backend.type": backend,
        "state.backend.rocksdb.localdir": str(tmp_path / "rocksdb"),
        "state.backend.rocksdb.object-cache.entries": "3",
    }


@pytest.mark.parametrize(("before", "after"), BACKEND_PAIRS)
@pytest.mark.parametrize(("old_parallelism", "new_parallelism"), [(1, 1), (1, 2), (2, 1), (2, 3)])
def test_keyed_process_function_timers_survive_restore_and_rescale(
    tmp_path: Path, before: str, after: str, old_parallelism: int, new_parallelism: int
) -> None:
    blobs = Blobs()
    descriptor = op(
        blobs, "keyed_process", Timers(), key=lambda v: v[0],
        config={TIMESTAMPED_INPUT: True, TIMESTAMPED_OUTPUT: True},
    )  # fmt: skip

    def make(parallelism: int, index: int, config: dict[str, str]) -> Subtask:
        return Subtask(blobs, descriptor, parallelism, index, config)

    old = [make(old_parallelism, i, config_of(before, tmp_path)) for i in range(old_parallelism)]
    for n, key in enumerate(KEYS):
        owner = old[assign_to_key_group(key, MAX_PAR) * old_parallelism // MAX_PAR]
        owner.clock.now = 1_000_000 + n
        owner.process(((key, n), 1000 + n), ((key, -n), 1000 + n))
    # Fire the event-time timers of the first five keys before the snapshot.
    fired_before = [record for s in old for record in s.watermark(1104)]
    assert sorted(v for v, _ in fired_before) == [("EVENT_TIME", 1100 + n, f"k{n}", 2) for n in range(5)]

    storage, plan = snapshot_and_plan(tmp_path, old, descriptor.operator_id, new_parallelism)
    for s in old:
        s.operator.close()
    # Timers are in the key-group files, as state of kind "timer".
    _, some_file, offset, size = plan[0].key_group_files[0]
    kinds = {name: kind for name, (kind, _) in read_key_group(storage, some_file, offset, size).items()}
    assert kinds["_timer_state/processing_user-timers"] == "timer"

    new = restore_into(storage, plan, make, config_of(after, tmp_path))
    for s in new:
        mine = [
            n for n, key in enumerate(KEYS) if assign_to_key_group(key, MAX_PAR) in s.backend.key_group_range
        ]
        expected = 1_000_500 + min(mine) if mine else None
        assert s.pts.next_due() == expected, "restored processing-time timers are scheduled"
    event_fired: list[tuple[int, Any]] = []
    for i, s in enumerate(new):
        for value, ts in s.watermark(LONG_MAX):
            event_fired.append((i, value))
            assert ts == value[1]
    assert sorted(v for _, v in event_fired) == [("EVENT_TIME", 1100 + n, f"k{n}", 2) for n in range(5, 20)]
    for i, (_, _, key, _) in event_fired:
        assert assign_to_key_group(key, MAX_PAR) in new[i].backend.key_group_range
    processing_fired = [value for s in new for value, _ in s.processing_time(1_000_510)]
    assert sorted(processing_fired) == [("PROCESSING_TIME", 1_000_500 + n, f"k{n}", 2) for n in range(11)]
    processing_fired = [value for s in new for value, _ in s.processing_time(2_000_000)]
    assert sorted(processing_fired) == [("PROCESSING_TIME", 1_000_500 + n, f"k{n}", 2) for n in range(11, 20)]
    for s in new:
        assert s.pts.next_due() is None
        s.operator.close()


@pytest.mark.parametrize(("before", "after"), BACKEND_PAIRS)
@pytest.mark.parametrize("new_parallelism", [1, 2])
def test_event_time_windows_fire_after_restore(
    tmp_path: Path, before: str, after: str, new_parallelism: int
) -> None:
    blobs = Blobs()
    spec = WindowOperatorSpec(
        TumblingEventTimeWindows.of(1000), function_kind="process", window_function=Contents()
    )
    descriptor = op(
        blobs, "window", spec, key=lambda v: v[0], config={TIMESTAMPED_INPUT: True, TIMESTAMPED_OUTPUT: True}
    )

    def make(parallelism: int, index: int, config: dict[str, str]) -> Subtask:
        return Subtask(blobs, descriptor, parallelism, index, config)

    (old,) = [make(1, 0, config_of(before, tmp_path))]
    records = [((key, n * 10 + w), w * 1000 + n) for n, key in enumerate(KEYS) for w in range(3)]
    old.process(*records)
    fired_before = old.watermark(999)
    assert sorted(v for v, _ in fired_before) == sorted(
        (key, 0, 1000, [n * 10]) for n, key in enumerate(KEYS)
    )
    storage, plan = snapshot_and_plan(tmp_path, [old], descriptor.operator_id, new_parallelism)
    old.operator.close()

    new = restore_into(storage, plan, make, config_of(after, tmp_path))
    fired = []
    for s in new:
        for (key, start, end, values), ts in s.watermark(1999):
            assert assign_to_key_group(key, MAX_PAR) in s.backend.key_group_range
            assert ts == end - 1
            fired.append((key, start, end, values))
    assert sorted(fired) == sorted((key, 1000, 2000, [n * 10 + 1]) for n, key in enumerate(KEYS))
    rest = sorted(v for s in new for v, _ in s.watermark(LONG_MAX))
    assert rest == sorted((key, 2000, 3000, [n * 10 + 2]) for n, key in enumerate(KEYS))
    for s in new:
        assert all(len(q) == 0 for q in s.backend.timer_queues().values())
        s.operator.close()


@pytest.mark.parametrize(("before", "after"), BACKEND_PAIRS)
def test_processing_time_windows_fire_after_restore(tmp_path: Path, before: str, after: str) -> None:
    blobs = Blobs()
    spec = WindowOperatorSpec(
        TumblingProcessingTimeWindows.of(1000), function_kind="process", window_function=Contents()
    )
    descriptor = op(blobs, "window", spec, key=lambda v: v[0])

    def make(parallelism: int, index: int, config: dict[str, str]) -> Subtask:
        return Subtask(blobs, descriptor, parallelism, index, config)

    old = make(1, 0, config_of(before, tmp_path))
    old.clock.now = 10_000
    old.process(*[(key, n) for n, key in enumerate(KEYS)])
    old.clock.now = 11_000 - 1
    old.process(*[(key, 100 + n) for n, key in enumerate(KEYS[:5])])
    storage, plan = snapshot_and_plan(tmp_path, [old], descriptor.operator_id, 2)
    old.operator.close()

    new = restore_into(storage, plan, make, config_of(after, tmp_path))
    assert [s.pts.next_due() for s in new] == [10_999, 10_999]
    fired = [value for s in new for value, _ in s.processing_time(20_000)]
    expected = [(key, 10_000, 11_000, [n] + ([100 + n] if n < 5 else [])) for n, key in enumerate(KEYS)]
    assert sorted(fired) == sorted(expected)
    for s in new:
        s.operator.close()


class Recording:
    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.fired: list[tuple[str, int, Any, Any]] = []

    def on_event_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        assert self.backend.current_key == key
        self.fired.append(("event", timestamp, key, namespace))

    def on_processing_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        assert self.backend.current_key == key
        self.fired.append(("processing", timestamp, key, namespace))


@pytest.mark.parametrize("backend_type", ["hashmap", "rocksdb"])
def test_a_timer_service_created_on_restored_timers_schedules_them(tmp_path: Path, backend_type: str) -> None:
    config = config_of(backend_type, tmp_path)
    kgr = KeyGroupRange(0, MAX_PAR - 1)
    source = create_keyed_state_backend(config, MAX_PAR, kgr, operator_id="o", subtask_index=0)
    clock = Clock(100)
    service = InternalTimerService("svc", source, ProcessingTimeService(clock), Recording(source))
    for key, ts in [("a", 700), ("b", 300), ("c", 300)]:
        source.current_key = key
        service.register_processing_time_timer(("ns", key), ts)
        service.register_event_time_timer(None, ts + 1)
    storage = FsspecCheckpointStorage()
    sub = snapshot_keyed_backend(
        storage, str(tmp_path / "s"), source, operator_id="o", subtask_index=0, parallelism=1
    )
    assert sub.keyed_state_kinds == {
        "_timer_state/event_svc": "timer",
        "_timer_state/processing_svc": "timer",
    }
    source.dispose()

    target = create_keyed_state_backend(config, MAX_PAR, kgr, operator_id="o", subtask_index=0)
    assert restore_keyed_backend(storage, target, key_group_blobs(str(tmp_path / "s"), sub.key_groups)) == 6
    pts = ProcessingTimeService(clock)
    rec = Recording(target)
    restored = InternalTimerService("svc", target, pts, rec)  # created after the restore
    assert pts.next_due() == 300
    pts.fire_due(500)
    assert sorted(rec.fired) == [("processing", 300, "b", ("ns", "b")), ("processing", 300, "c", ("ns", "c"))]
    assert pts.next_due() == 700
    restored.advance_watermark(1000)
    assert sorted(rec.fired[2:]) == [
        ("event", 301, "b", None),
        ("event", 301, "c", None),
        ("event", 701, "a", None),
    ]
    pts.fire_due(700)
    assert rec.fired[-1] == ("processing", 700, "a", ("ns", "a"))
    target.dispose()
