"""State time-to-live on both backends, with a fake clock: expiry per state kind (list per element,
map per entry), update types, visibility, cleanup on access, incrementally, in snapshots and in the
RocksDB store; timestamps through snapshot and restore; restoring into a descriptor with the other
TTL setting; settings flott refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flott.common.time import Time
from flott.datastream.functions import AggregateFunction
from flott.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from flott.datastream.window import TimeWindow
from flott.errors import NotYetSupportedError
from flott.runtime.checkpoint.snapshot import (
    key_group_blobs,
    read_key_group,
    restore_keyed_backend,
    snapshot_keyed_backend,
)
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from flott.runtime.state.ttl import TtlValue
from tests.state.conftest import MakeBackend

TTL = 100
UpdateType = StateTtlConfig.UpdateType
Visibility = StateTtlConfig.StateVisibility


class Clock:
    """The backends' TTL time provider, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_000

    def __call__(self) -> int:
        return self.now

    def at(self, offset: int) -> None:
        self.now = 1_000 + offset


class Sum(AggregateFunction):
    def create_accumulator(self) -> Any:
        return 0

    def add(self, value: Any, acc: Any) -> Any:
        return acc + value

    def get_result(self, acc: Any) -> Any:
        return acc

    def merge(self, a: Any, b: Any) -> Any:
        return a + b


def with_ttl(descriptor: StateDescriptor, builder: StateTtlConfig.Builder | None = None) -> Any:
    descriptor.enable_time_to_live((builder or StateTtlConfig.new_builder(Time.milliseconds(TTL))).build())
    return descriptor


def ttl_builder() -> StateTtlConfig.Builder:
    return StateTtlConfig.new_builder(Time.milliseconds(TTL))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def backend(make_backend: MakeBackend, clock: Clock) -> Any:
    b = make_backend()
    b.ttl_time_provider = clock
    return b


def entries_of(backend: Any, name: str) -> dict[Any, Any]:
    """What a snapshot of ``backend`` holds for state ``name``."""
    out: dict[Any, Any] = {}
    for _, states in backend.iter_key_group_entries():
        out.update(states.get(name, {}))
    return out


# --- expiry per state kind ------------------------------------------------------------------------


def test_value_expires_after_its_ttl_and_is_removed_on_read(backend: Any, clock: Clock) -> None:
    v = backend.get_value_state(with_ttl(ValueStateDescriptor("v", None)))
    plain = backend.get_value_state(ValueStateDescriptor("plain", None))
    backend.set_current_key("k")
    v.update("x")
    plain.update("p")
    clock.at(TTL - 1)
    assert v.value() == "x"
    clock.at(TTL)
    assert v.value() is None
    assert backend.num_keys("v") == 0  # cleaned up on access
    clock.at(10 * TTL)
    assert plain.value() == "p"  # state without TTL never expires


def test_a_write_restarts_the_ttl(backend: Any, clock: Clock) -> None:
    v = backend.get_value_state(with_ttl(ValueStateDescriptor("v", None)))
    backend.set_current_key("k")
    v.update(1)
    clock.at(90)
    v.update(2)
    clock.at(180)
    assert v.value() == 2
    clock.at(190)
    assert v.value() is None


def test_on_create_and_write_does_not_refresh_on_read(backend: Any, clock: Clock) -> None:
    v = backend.get_value_state(
        with_ttl(ValueStateDescriptor("v", None), ttl_builder().set_update_type(UpdateType.OnCreateAndWrite))
    )
    backend.set_current_key("k")
    v.update("x")
    clock.at(90)
    assert v.value() == "x"
    clock.at(100)
    assert v.value() is None


def test_on_read_and_write_refreshes_on_read(backend: Any, clock: Clock) -> None:
    v = backend.get_value_state(
        with_ttl(ValueStateDescriptor("v", None), ttl_builder().set_update_type(UpdateType.OnReadAndWrite))
    )
    backend.set_current_key("k")
    v.update("x")
    clock.at(90)
    assert v.value() == "x"
    clock.at(180)
    assert v.value() == "x"
    clock.at(280)
    assert v.value() is None


def test_update_type_disabled_means_no_ttl(backend: Any, clock: Clock) -> None:
    v = backend.get_value_state(
        with_ttl(ValueStateDescriptor("v", None), ttl_builder().set_update_type(UpdateType.Disabled))
    )
    backend.set_current_key("k")
    v.update("x")
    clock.at(100 * TTL)
    assert v.value() == "x"
    assert not backend.has_ttl("v")


def test_return_expired_if_not_cleaned_up_returns_it_once(backend: Any, clock: Clock) -> None:
    builder = (
        ttl_builder()
        .set_state_visibility(Visibility.ReturnExpiredIfNotCleanedUp)
        .disable_cleanup_in_background()  # else the heap's incremental cleanup gets there first
    )
    v = backend.get_value_state(with_ttl(ValueStateDescriptor("v", None), builder))
    backend.set_current_key("k")
    v.update("x")
    clock.at(150)
    assert v.value() == "x"  # expired, not cleaned up yet: returned, and cleaned up by this read
    assert v.value() is None


def test_list_elements_expire_one_by_one(backend: Any, clock: Clock) -> None:
    lst = backend.get_list_state(with_ttl(ListStateDescriptor("l", None)))
    backend.set_current_key("k")
    lst.add("x")
    clock.at(50)
    lst.add_all(["y", "z"])
    clock.at(120)
    assert lst.get() == ["y", "z"]
    lst.add("w")
    clock.at(160)
    assert lst.get() == ["w"]
    clock.at(260)
    assert lst.get() == []
    assert backend.num_keys("l") == 0  # nothing unexpired: the list is cleared


def test_list_update_stamps_every_element(backend: Any, clock: Clock) -> None:
    lst = backend.get_list_state(with_ttl(ListStateDescriptor("l", None)))
    backend.set_current_key("k")
    lst.add("old")
    clock.at(80)
    lst.update(["a", "b"])
    clock.at(170)
    assert lst.get() == ["a", "b"]
    lst.update([])
    assert backend.num_keys("l") == 0


def test_list_return_expired_returns_all_until_cleaned(backend: Any, clock: Clock) -> None:
    builder = ttl_builder().return_expired_if_not_cleaned_up().disable_cleanup_in_background()
    lst = backend.get_list_state(with_ttl(ListStateDescriptor("l", None), builder))
    backend.set_current_key("k")
    lst.add("x")
    clock.at(50)
    lst.add("y")
    clock.at(120)
    assert lst.get() == ["x", "y"]  # one element is unexpired: the list stays, expired included
    clock.at(200)
    assert lst.get() == ["x", "y"]  # all expired: returned once and cleared
    assert lst.get() == []


def test_list_on_read_and_write_keeps_the_unexpired_restamped(backend: Any, clock: Clock) -> None:
    lst = backend.get_list_state(
        with_ttl(ListStateDescriptor("l", None), ttl_builder().update_ttl_on_read_and_write())
    )
    backend.set_current_key("k")
    lst.add("x")
    clock.at(50)
    lst.add("y")
    clock.at(120)
    assert lst.get() == ["y"]
    clock.at(210)
    assert lst.get() == ["y"]  # the read at 120 restamped it
    assert entries_of(backend, "l") == {"k": [TtlValue("y", clock.now)]}


def test_map_entries_expire_one_by_one(backend: Any, clock: Clock) -> None:
    m = backend.get_map_state(with_ttl(MapStateDescriptor("m", None, None)))
    backend.set_current_key("k")
    m.put("a", 1)
    clock.at(50)
    m.put_all({"b": 2, "c": 3})
    clock.at(120)
    assert m.get("a") is None
    assert not m.contains("a")
    assert m.contains("b")
    assert sorted(m.keys()) == ["b", "c"]
    assert sorted(m.values()) == [2, 3]
    assert sorted(m.items()) == [("b", 2), ("c", 3)]
    assert not m.is_empty()
    clock.at(150)
    assert m.is_empty()
    assert backend.num_keys("m") == 0


def test_map_return_expired_and_on_read(backend: Any, clock: Clock) -> None:
    builder = (
        ttl_builder()
        .return_expired_if_not_cleaned_up()
        .update_ttl_on_read_and_write()
        .disable_cleanup_in_background()
    )
    m = backend.get_map_state(with_ttl(MapStateDescriptor("m", None, None), builder))
    backend.set_current_key("k")
    m.put("a", 1)
    m.put("b", 2)
    clock.at(90)
    assert m.get("b") == 2  # restamps b
    clock.at(150)
    assert sorted(m.items()) == [("a", 1), ("b", 2)]  # a expired, returned once, removed
    assert sorted(m.keys()) == ["b"]


def test_reducing_does_not_fold_into_an_expired_value(backend: Any, clock: Clock) -> None:
    r = backend.get_reducing_state(with_ttl(ReducingStateDescriptor("r", lambda a, b: a + b, None)))
    backend.set_current_key("k")
    r.add(1)
    clock.at(50)
    r.add(2)
    assert r.get() == 3
    clock.at(160)
    r.add(10)
    assert r.get() == 10
    clock.at(260)
    assert r.get() is None


def test_aggregating_starts_a_new_accumulator_after_expiry(backend: Any, clock: Clock) -> None:
    a = backend.get_aggregating_state(with_ttl(AggregatingStateDescriptor("a", Sum(), None)))
    backend.set_current_key("k")
    a.add(5)
    a.add(6)
    assert a.get() == 11
    clock.at(100)
    assert a.get() is None
    a.add(7)
    assert a.get() == 7


def test_keys_expire_independently(backend: Any, clock: Clock) -> None:
    v = backend.get_value_state(with_ttl(ValueStateDescriptor("v", None)))
    backend.set_current_key("a")
    v.update("A")
    clock.at(60)
    backend.set_current_key("b")
    v.update("B")
    clock.at(110)
    assert v.value() == "B"
    backend.set_current_key("a")
    assert v.value() is None


def test_per_window_state_with_ttl(backend: Any, clock: Clock) -> None:
    v = backend.get_namespaced_value_state(with_ttl(ValueStateDescriptor("wv", None)))
    lst = backend.get_namespaced_list_state(with_ttl(ListStateDescriptor("wl", None)))
    w1, w2 = TimeWindow(0, 10), TimeWindow(10, 20)
    backend.set_current_key("k")
    backend.current_namespace = w1
    v.update("one")
    lst.add(1)
    clock.at(60)
    backend.current_namespace = w2
    v.update("two")
    lst.add(2)
    clock.at(110)
    assert v.value() == "two" and lst.get() == [2]
    backend.current_namespace = w1
    assert v.value() is None and lst.get() == []
    lst.add(3)
    lst.merge_namespaces(w1, [w2])
    assert sorted(lst.get()) == [2, 3]


# --- cleanup ---------------------------------------------------------------------------------


def test_snapshot_keeps_expired_values_without_snapshot_cleanup(backend: Any, clock: Clock) -> None:
    v = backend.get_value_state(
        with_ttl(ValueStateDescriptor("v", None), ttl_builder().disable_cleanup_in_background())
    )
    backend.set_current_key("k")
    v.update("x")
    clock.at(500)
    assert entries_of(backend, "v") == {"k": TtlValue("x", 1_000)}


def test_full_snapshot_cleanup_leaves_expired_state_out(backend: Any, clock: Clock) -> None:
    builder = ttl_builder().cleanup_full_snapshot().disable_cleanup_in_background()
    v = backend.get_value_state(with_ttl(ValueStateDescriptor("v", None), builder))
    lst = backend.get_list_state(with_ttl(ListStateDescriptor("l", None), builder))
    m = backend.get_map_state(with_ttl(MapStateDescriptor("m", None, None), builder))
    plain = backend.get_value_state(ValueStateDescriptor("plain", None))
    for key in ("old", "mixed"):
        backend.set_current_key(key)
        v.update(key)
        lst.add(key)
        m.put(key, 1)
        plain.update(key)
    clock.at(60)
    backend.set_current_key("mixed")
    lst.add("new")
    m.put("new", 2)
    clock.at(120)
    assert entries_of(backend, "v") == {}
    assert entries_of(backend, "l") == {"mixed": [TtlValue("new", 1_060)]}
    assert entries_of(backend, "m") == {"mixed": {"new": TtlValue(2, 1_060)}}
    assert entries_of(backend, "plain") == {"old": "old", "mixed": "mixed"}
    # The local state is not changed by a snapshot (background cleanup is off).
    assert backend.num_keys("v") == 2


def test_incremental_cleanup_on_the_heap_checks_keys_on_each_access(
    make_backend: MakeBackend, clock: Clock, backend_type: str
) -> None:
    b = make_backend()
    b.ttl_time_provider = clock
    builder = ttl_builder().cleanup_incrementally(10, False)
    v = b.get_value_state(with_ttl(ValueStateDescriptor("v", None), builder))
    for i in range(100):
        b.set_current_key(i)
        v.update(i)
    clock.at(TTL)
    b.set_current_key("other")
    v.value()
    if backend_type == "hashmap":
        assert 90 <= b.num_keys("v") <= 99  # one access checks up to ten keys
        for _ in range(25):  # enough for a whole round through the keys
            v.value()
        assert b.num_keys("v") == 0
    else:
        for _ in range(25):
            v.value()
        assert b.num_keys("v") == 100  # Flink: incremental cleanup has no effect on RocksDB


@pytest.mark.parametrize("kind", ["value", "list", "map"])
def test_incremental_cleanup_between_rounds_misses_nothing(
    make_backend: MakeBackend, clock: Clock, kind: str
) -> None:
    """After a round, steps are skipped until the oldest kept value can expire; writes made
    meanwhile are newer, so everything is still cleaned up in time."""
    b = make_backend()
    b.ttl_time_provider = clock
    builder = ttl_builder().cleanup_incrementally(5, False)
    if kind == "value":
        state = b.get_value_state(with_ttl(ValueStateDescriptor("v", None), builder))
        write, read = state.update, state.value
    elif kind == "list":
        state = b.get_list_state(with_ttl(ListStateDescriptor("v", None), builder))
        write, read = state.add, state.get
    else:
        state = b.get_map_state(with_ttl(MapStateDescriptor("v", None, None), builder))
        write, read = (lambda value: state.put("entry", value)), state.is_empty

    def access(times: int) -> None:
        b.set_current_key("reader")
        for _ in range(times):
            read()

    for i in range(20):
        b.set_current_key(("early", i))
        write(i)
    clock.at(10)
    access(10)  # at least one whole round: nothing expired
    clock.at(50)
    for i in range(20):
        b.set_current_key(("late", i))
        write(i)
    clock.at(120)
    access(30)
    remaining = set(b.keys("v"))
    if b.backend_type == "hashmap":
        assert remaining == {("late", i) for i in range(20)}
        clock.at(150)
        access(30)
        assert b.num_keys("v") == 0
    else:
        assert len(remaining) == 40  # no incremental cleanup on RocksDB (Flink's rule)


def test_incremental_cleanup_of_lists_and_maps_keeps_what_is_alive(
    make_backend: MakeBackend, clock: Clock, backend_type: str
) -> None:
    if backend_type != "hashmap":
        pytest.skip("the heap backend's cleanup")
    b = make_backend()
    b.ttl_time_provider = clock
    builder = ttl_builder().cleanup_incrementally(10, False)
    lst = b.get_list_state(with_ttl(ListStateDescriptor("l", None), builder))
    m = b.get_map_state(with_ttl(MapStateDescriptor("m", None, None), builder))
    for i in range(50):
        b.set_current_key(i)
        lst.add("old")
        m.put("old", 1)
    clock.at(60)
    for i in range(25):
        b.set_current_key(i)
        lst.add("new")
        m.put("new", 2)
    clock.at(TTL)
    b.set_current_key("other")
    for _ in range(20):
        lst.get()
        m.get("x")
    assert b.entries_by_key_group("l") and all(
        value == [TtlValue("new", 1_060)]
        for group in b.entries_by_key_group("l").values()
        for value in group.values()
    )
    assert b.num_keys("l") == 25 and b.num_keys("m") == 25
    b.set_current_key(3)
    assert lst.get() == ["new"] and m.items() == [("new", 2)]


def test_background_cleanup_is_on_by_default_on_the_heap(
    make_backend: MakeBackend, clock: Clock, backend_type: str
) -> None:
    if backend_type != "hashmap":
        pytest.skip("the heap backend's default")
    b = make_backend()
    b.ttl_time_provider = clock
    v = b.get_value_state(with_ttl(ValueStateDescriptor("v", None)))
    for i in range(20):
        b.set_current_key(i)
        v.update(i)
    clock.at(TTL)
    b.set_current_key("other")
    v.value()
    assert 15 <= b.num_keys("v") <= 19  # Flink's default: up to 5 keys per access
    for _ in range(10):
        v.value()
    assert b.num_keys("v") == 0
    no_background = with_ttl(ValueStateDescriptor("v2", None), ttl_builder().disable_cleanup_in_background())
    v2 = b.get_value_state(no_background)
    b.set_current_key(1)
    v2.update(1)
    clock.at(3 * TTL)
    b.set_current_key("other")
    v2.value()
    assert b.num_keys("v2") == 1


def test_rocksdb_background_cleanup_drops_expired_entries_when_a_checkpoint_scans(
    make_backend: MakeBackend, clock: Clock, backend_type: str
) -> None:
    if backend_type != "rocksdb":
        pytest.skip("RocksDB's background cleanup")
    b = make_backend()
    b.ttl_time_provider = clock
    v = b.get_value_state(
        with_ttl(ValueStateDescriptor("v", None), ttl_builder().cleanup_in_rocksdb_compact_filter(1000))
    )
    lst = b.get_list_state(with_ttl(ListStateDescriptor("l", None)))  # the default: on
    kept = b.get_value_state(
        with_ttl(ValueStateDescriptor("kept", None), ttl_builder().disable_cleanup_in_background())
    )
    for i in range(30):
        b.set_current_key(i)
        v.update(i)
        lst.add(i)
        kept.update(i)
    clock.at(50)
    b.set_current_key(0)
    lst.add("fresh")
    clock.at(TTL)
    snapshot = {name: entries_of(b, name) for name in ("v", "l", "kept")}
    assert snapshot["v"] == {}
    assert snapshot["l"] == {0: [TtlValue("fresh", 1_050)]}
    assert len(snapshot["kept"]) == 30
    assert b.num_keys("v") == 0
    assert b.num_keys("l") == 1
    assert b.num_keys("kept") == 30
    b.set_current_key(0)
    assert lst.get() == ["fresh"]


def test_rocksdb_background_cleanup_drops_expired_entries_leaving_the_object_cache(
    make_backend: MakeBackend, clock: Clock, backend_type: str
) -> None:
    if backend_type != "rocksdb":
        pytest.skip("RocksDB's background cleanup")
    b = make_backend()  # an object cache of 4 entries per generation
    b.ttl_time_provider = clock
    v = b.get_value_state(with_ttl(ValueStateDescriptor("v", None)))
    plain = b.get_value_state(ValueStateDescriptor("plain", None))
    for i in range(4):  # still cached when they expire
        b.set_current_key(f"old{i}")
        v.update(i)
        plain.update(i)
    clock.at(TTL)
    for i in range(30):  # pushes the old keys out of the cache
        b.set_current_key(f"new{i}")
        v.update(i)
    assert set(b.keys("v")) == {f"new{i}" for i in range(30)}
    assert b.num_keys("plain") == 4


# --- snapshots and restore -------------------------------------------------------------------


def snapshot_files(
    backend: Any, storage: FsspecCheckpointStorage, directory: str
) -> list[tuple[int, str, int, int]]:
    sub = snapshot_keyed_backend(
        storage, directory, backend, operator_id="op", subtask_index=0, parallelism=1
    )
    return key_group_blobs(directory, sub.key_groups)


@pytest.mark.parametrize("target_type", ["hashmap", "rocksdb"])
def test_timestamps_survive_snapshot_and_restore(
    make_backend: MakeBackend, clock: Clock, tmp_path: Path, target_type: str
) -> None:
    storage = FsspecCheckpointStorage()
    source = make_backend()
    source.ttl_time_provider = clock
    descriptors = {
        "v": with_ttl(ValueStateDescriptor("v", None)),
        "l": with_ttl(ListStateDescriptor("l", None)),
        "m": with_ttl(MapStateDescriptor("m", None, None)),
    }
    v = source.get_value_state(descriptors["v"])
    lst = source.get_list_state(descriptors["l"])
    m = source.get_map_state(descriptors["m"])
    source.set_current_key("k")
    v.update("x")
    lst.add("early")
    m.put("early", 1)
    clock.at(60)
    lst.add("late")
    m.put("late", 2)
    files = snapshot_files(source, storage, str(tmp_path / "chk"))
    contents = [read_key_group(storage, path, offset, size) for _, path, offset, size in files]
    assert any(state.get("v", ("", {}))[1] == {"k": TtlValue("x", 1_000)} for state in contents)

    from tests.state.conftest import create_keyed_state_backend

    target = create_keyed_state_backend(
        {"state.backend.type": target_type, "state.backend.rocksdb.localdir": str(tmp_path / "r2")},
        128,
        source.key_group_range,
        operator_id="op",
        subtask_index=0,
    )
    try:
        target.ttl_time_provider = clock
        restore_keyed_backend(storage, target, files)
        v2 = target.get_value_state(descriptors["v"])
        l2 = target.get_list_state(descriptors["l"])
        m2 = target.get_map_state(descriptors["m"])
        target.set_current_key("k")
        clock.at(99)
        assert v2.value() == "x"
        clock.at(100)  # the value's own write time counts, not the restore
        assert v2.value() is None
        assert l2.get() == ["late"]
        assert m2.keys() == ["late"]
    finally:
        target.dispose()


def test_restoring_ttl_state_into_a_descriptor_without_ttl_drops_the_timestamps(
    make_backend: MakeBackend, clock: Clock, tmp_path: Path
) -> None:
    storage = FsspecCheckpointStorage()
    source = make_backend()
    source.ttl_time_provider = clock
    v = source.get_value_state(with_ttl(ValueStateDescriptor("v", None)))
    lst = source.get_list_state(with_ttl(ListStateDescriptor("l", None)))
    m = source.get_map_state(with_ttl(MapStateDescriptor("m", None, None)))
    source.set_current_key("k")
    v.update("x")
    lst.add_all([1, 2])
    m.put("a", 1)
    files = snapshot_files(source, storage, str(tmp_path / "chk"))
    target = make_backend()
    target.ttl_time_provider = clock
    restore_keyed_backend(storage, target, files)
    clock.at(10 * TTL)
    v2 = target.get_value_state(ValueStateDescriptor("v", None))
    l2 = target.get_list_state(ListStateDescriptor("l", None))
    m2 = target.get_map_state(MapStateDescriptor("m", None, None))
    target.set_current_key("k")
    assert (v2.value(), l2.get(), m2.items()) == ("x", [1, 2], [("a", 1)])
    assert entries_of(target, "v") == {"k": "x"}


def test_restoring_plain_state_into_a_descriptor_with_ttl_starts_its_ttl_at_the_restore(
    make_backend: MakeBackend, clock: Clock, tmp_path: Path
) -> None:
    storage = FsspecCheckpointStorage()
    source = make_backend()
    v = source.get_value_state(ValueStateDescriptor("v", None))
    m = source.get_map_state(MapStateDescriptor("m", None, None))
    source.set_current_key("k")
    v.update("x")
    m.put("a", 1)
    files = snapshot_files(source, storage, str(tmp_path / "chk"))
    target = make_backend()
    target.ttl_time_provider = clock
    restore_keyed_backend(storage, target, files)
    clock.at(500)
    v2 = target.get_value_state(with_ttl(ValueStateDescriptor("v", None)))
    m2 = target.get_map_state(with_ttl(MapStateDescriptor("m", None, None)))
    target.set_current_key("k")
    clock.at(599)
    assert v2.value() == "x" and m2.get("a") == 1
    clock.at(600)
    assert v2.value() is None and m2.get("a") is None


# --- refusals ----------------------------------------------------------------------------------


def test_settings_flott_cannot_honour_are_refused() -> None:
    d = ValueStateDescriptor("v", None)
    with pytest.raises(NotYetSupportedError, match="run_cleanup_for_every_record"):
        d.enable_time_to_live(ttl_builder().cleanup_incrementally(5, True).build())
    with pytest.raises(ValueError, match="positive"):
        d.enable_time_to_live(StateTtlConfig.new_builder(Time.milliseconds(0)).build())
    with pytest.raises(ValueError, match="positive"):
        d.enable_time_to_live(ttl_builder().cleanup_incrementally(0, False).build())
    assert d.get_ttl_config() is None


def test_one_name_cannot_be_registered_with_and_without_ttl(backend: Any) -> None:
    backend.get_value_state(with_ttl(ValueStateDescriptor("v", None)))
    backend._states.clear()  # as if another function of the operator asked for the same name
    with pytest.raises(ValueError, match="time-to-live"):
        backend.get_value_state(ValueStateDescriptor("v", None))


def test_pyflink_defaults_of_the_cleanup_strategies() -> None:
    strategies = ttl_builder().build().get_cleanup_strategies()
    incremental = strategies.get_incremental_cleanup_strategy()
    assert incremental is not None
    assert (incremental.get_cleanup_size(), incremental.run_cleanup_for_every_record()) == (5, False)
    compaction = strategies.get_rocksdb_compact_filter_cleanup_strategy()
    assert compaction is not None and compaction.get_query_time_after_num_entries() == 1000
    assert not strategies.in_full_snapshot()
    off = ttl_builder().disable_cleanup_in_background().build().get_cleanup_strategies()
    assert off.get_incremental_cleanup_strategy() is None
    assert off.get_rocksdb_compact_filter_cleanup_strategy() is None
