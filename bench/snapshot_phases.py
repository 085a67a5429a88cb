"""Checkpoint phases, measured in-process on the state backends (sections ``async`` and
``incremental`` of bench/checkpoint_bench.py).

No cluster: the functions a task runs are called directly on one backend of one subtask, so the
figures are the phases themselves, without scheduling noise. Storage is a local directory
(``file://``), written through :class:`FsspecCheckpointStorage` as tasks do.

* **async**: how long the task stops processing per checkpoint. *Synchronous snapshot* (what a
  task did before the asynchronous phase): the live entries written to key-group files on the
  task thread. *Asynchronous*: the capture alone is the stop (heap: each table copied,
  ``dict.copy`` when its values are immutable, pickled whole otherwise; RocksDB: a native
  checkpoint, hard links); the writing that follows on the writer thread is shown next to it.
  Heap state in two shapes: 1 KB random ``bytes`` values (immutable: the copy shares them) and
  lists of 20 ints (pickled). Between rounds 1 % of the keys change.
* **incremental**: a RocksDB backend holding ``--phase-mb`` MB (1 KB random values), then
  ``--phase-intervals`` intervals in each of which 1 % of the keys get new values, each followed
  by a checkpoint: full (canonical key-group files) vs incremental (new table files only). Bytes
  written and wall time (capture + write) per checkpoint; the first incremental checkpoint
  uploads everything, as in Flink. Once per compaction style (``state.backend.rocksdb.compaction.style``):
  LEVEL (the default, as in Flink) rewrites a whole level when updates are spread over all keys,
  and the next checkpoint uploads the rewritten files; UNIVERSAL merges the small new runs and
  leaves the big one alone for much longer.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

from flott.datastream.state import ValueStateDescriptor
from flott.runtime.checkpoint.incremental import IncrementalSnapshotter
from flott.runtime.checkpoint.snapshot import KeyedStateCapture, capture_keyed_backend
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage, join
from flott.runtime.state.heap import HeapKeyedStateBackend
from flott.runtime.state.key_groups import KeyGroupRange
from flott.runtime.state.rocksdb import RocksDBKeyedStateBackend

MAX_PAR = 128
ALL = KeyGroupRange(0, MAX_PAR - 1)
STATE = ValueStateDescriptor("value", None)


def _fill(backend: Any, keys: range | list[int], value: Any) -> None:
    state = backend.get_value_state(STATE)
    for k in keys:
        backend.set_current_key(k)
        state.update(value(k))


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _full(backend: Any, storage: Any, directory: Path) -> tuple[float, float, int]:
    """(capture s, write s, bytes) of a full canonical snapshot."""
    t0 = time.perf_counter()
    capture = capture_keyed_backend(backend, operator_id="op", subtask_index=0, parallelism=1)
    t1 = time.perf_counter()
    capture.write(storage, str(directory))
    capture.release()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, _dir_bytes(directory)


def _old_synchronous(backend: Any, storage: Any, directory: Path) -> float:
    """Seconds of the synchronous snapshot tasks took before the asynchronous phase: the live
    entries (no copy, no native checkpoint) written straight from the task thread."""
    t0 = time.perf_counter()
    kgr = backend.key_group_range
    KeyedStateCapture(
        operator_id="op", subtask_index=0, parallelism=1, max_parallelism=backend.max_parallelism,
        key_group_range=(kgr.start_key_group, kgr.end_key_group),
        kinds={name: str(backend.state_kind(name)) for name in backend.state_names()},
        timers={}, entries=backend.iter_key_group_entries(),
    ).write(storage, str(directory))  # fmt: skip
    return time.perf_counter() - t0


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def async_section(mb: int, rounds: int, tmp: Path) -> str:
    storage = FsspecCheckpointStorage()
    keys = range(mb * 1000)
    shapes: list[tuple[str, str, Any]] = [
        ("hashmap", "1 KB bytes", lambda k: os.urandom(1000)),
        ("hashmap", "list of 20 ints", lambda k: list(range(k, k + 20))),
        ("rocksdb", "1 KB bytes", lambda k: os.urandom(1000)),
    ]
    rows = [
        "| backend | values | keys | synchronous snapshot: task stopped, s | asynchronous: task stopped "
        "(capture), s | asynchronous: writer, s | stop × |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for backend_type, shape, value in shapes:
        if backend_type == "hashmap":
            backend: Any = HeapKeyedStateBackend(MAX_PAR, ALL)
        else:
            backend = RocksDBKeyedStateBackend(MAX_PAR, ALL, local_dir=str(tmp / "rocksdb"))
        try:
            _fill(backend, keys, value)
            _full(backend, storage, tmp / "warm-up")  # RocksDB: the fill's memtable flushed once
            storage.delete_dir(str(tmp / "warm-up"))
            rng = random.Random(3)
            sync_stop, async_stop, writer = [], [], []
            for r in range(rounds):
                _fill(backend, rng.sample(keys, len(keys) // 100), value)  # 1 % changed per interval
                d = tmp / f"sync-{r}"
                sync_stop.append(_old_synchronous(backend, storage, d))
                storage.delete_dir(str(d))
                d = tmp / f"async-{r}"
                capture_s, write_s, _ = _full(backend, storage, d)
                async_stop.append(capture_s)
                writer.append(write_s)
                storage.delete_dir(str(d))
            s, a = _median(sync_stop), _median(async_stop)
            rows.append(
                f"| {backend_type} | {shape} | {len(keys):,} | {s:.2f} | {a:.3f} | {_median(writer):.2f} "
                f"| {s / a if a else float('inf'):.0f} |"
            )
        finally:
            getattr(backend, "dispose", lambda: None)()
    return "\n".join(
        [f"### Task stop per checkpoint, synchronous vs asynchronous ({mb} MB-ish of heap/RocksDB state, "
         f"median of {rounds})", "", *rows, ""]
    )  # fmt: skip


def incremental_section(mb: int, intervals: int, tmp: Path, compaction_style: str = "LEVEL") -> str:
    storage = FsspecCheckpointStorage()
    n = mb * 1000
    keys = range(n)
    rng = random.Random(7)
    backend = RocksDBKeyedStateBackend(
        MAX_PAR, ALL, local_dir=str(tmp / "rocksdb-inc"), compaction_style=compaction_style
    )
    rows = [
        "| checkpoint | full: bytes | full: s | incremental: bytes written | incremental: s "
        "| bytes × | time × |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    job_dir = tmp / "checkpoints" / "job"
    totals = {"full_b": 0, "full_s": 0.0, "inc_b": 0, "inc_s": 0.0}
    try:
        _fill(backend, keys, lambda k: os.urandom(1000))
        snapshotter = IncrementalSnapshotter("op", 0, 1)
        for cid in range(1, intervals + 2):
            if cid > 1:  # an interval: 1 % of the keys change
                state = backend.get_value_state(STATE)
                for k in rng.sample(range(n), n // 100):
                    backend.set_current_key(k)
                    state.update(os.urandom(1000))
            d = tmp / f"full-{cid}"
            c, w, full_bytes = _full(backend, storage, d)
            full_s = c + w
            storage.delete_dir(str(d))
            location = join(str(job_dir), f"chk-{cid}")
            t0 = time.perf_counter()
            capture = snapshotter.capture(backend, cid, uid=None, name="v", operator_states=None)
            state_handle = capture.write(storage, location)
            capture.release()
            inc_s = time.perf_counter() - t0
            snapshotter.notify_complete(cid)
            inc_bytes = state_handle.checkpointed_size(cid)
            label = f"{cid} (first: uploads all)" if cid == 1 else str(cid)
            rows.append(
                f"| {label} | {full_bytes / 1e6:.1f} MB | {full_s:.2f} | {inc_bytes / 1e6:.1f} MB "
                f"| {inc_s:.2f} | {inc_bytes / full_bytes:.3f} | {inc_s / full_s:.3f} |"
            )
            if cid > 1:
                totals["full_b"] += full_bytes
                totals["full_s"] += full_s
                totals["inc_b"] += inc_bytes
                totals["inc_s"] += inc_s
    finally:
        backend.dispose()
    bytes_x = totals["inc_b"] / max(totals["full_b"], 1)
    time_x = totals["inc_s"] / max(totals["full_s"], 1e-9)
    rows.append(
        f"| intervals 2..{intervals + 1} | {totals['full_b'] / 1e6:.1f} MB | {totals['full_s']:.2f} "
        f"| {totals['inc_b'] / 1e6:.1f} MB | {totals['inc_s']:.2f} | {bytes_x:.3f} | {time_x:.3f} |"
    )
    return "\n".join(
        [f"### RocksDB ({compaction_style} compaction), {mb} MB of state, 1 % of the keys changed per "
         "interval: full vs incremental checkpoints", "", *rows, ""]
    )  # fmt: skip
