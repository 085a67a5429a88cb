"""Keyed state backends compared: the heap, RocksDB (``rocksdict``) and LMDB (``lmdb``).

    python bench/state_backend_bench.py [--quick] [--ops 1000000] [--keys 100000] [--state-mb 200]
                                        [--backends heap,rocksdb,lmdb] [--dir DIR]

Both stores run under the *same* backend code (``RocksDBKeyedStateBackend`` with its store
swapped: ``store_factory``), so the numbers compare the stores, not two implementations.
LMDB's adapter lives here (``LmdbStore``); RocksDB's is the one flott ships.

Workloads, each in a fresh child process (so peak RSS is that workload's own):

* **value** -- ValueState read-modify-write: ``state.update((state.value() or 0) + 1)`` for
  ``--ops`` keys drawn uniformly (seeded) from ``--keys`` string keys, then a flush (the stores'
  cached entries written out). Stores run with the default object cache
  (``state.backend.rocksdb.object-cache.entries``: 20,000 per generation, so 20-40% of the
  100k keys are cached), with a small one (1% of the keys per generation), and with a cache of
  one entry (every access reaches the store: the store's own speed). "disk writes" is what the
  process sent towards the disk meanwhile (``/proc/self/io`` ``write_bytes``, RocksDB's
  background threads included), after the store flushed its memory: the write volume that
  decides throughput once state no longer fits in the page cache.
* **snapshot** -- ``--state-mb`` of keyed state (ValueState, one ~1 KB value per key: a tuple of
  an int and an 800-character hex string, 2x compressible), filled through the state handle; then
  a checkpoint with ``snapshot_keyed_backend`` to a local directory (the canonical per-key-group
  files: the same bytes for every backend, so the same size), and a restore of that checkpoint
  into a fresh backend of the same kind. Reported: fill rate, snapshot time and size, restore
  time, the store's size on disk, peak RSS.

Times are wall-clock seconds of one run (``time.perf_counter``); peak RSS is the child's
``ru_maxrss``. The machine's other work shows in the numbers: run twice before trusting a
difference under ~15%.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

KEY_PREFIX = "key-"
BACKENDS = ("heap", "rocksdb", "lmdb")


# --------------------------------------------------------------------------- LMDB, for comparison


class LmdbStore:
    """The backend's ``KVStore`` over LMDB: one environment, no fsync (state comes from checkpoints)."""

    def __init__(self, path: str, map_size: int = 1 << 40) -> None:
        import lmdb

        os.makedirs(path, exist_ok=True)
        self.path = path
        self._env = lmdb.open(path, map_size=map_size, sync=False, metasync=False, readahead=False)
        self._reader = self._env.begin()

    def get(self, key: bytes) -> bytes | None:
        value: bytes | None = self._reader.get(key)
        return value

    def getter(self) -> Callable[[bytes], bytes | None]:
        return self.get  # py-lmdb cannot renew a reader: it is replaced after each write

    def write(self, puts: list[tuple[bytes, bytes]], deletes: list[bytes]) -> None:
        if not puts and not deletes:
            return
        self._reader.abort()
        with self._env.begin(write=True) as txn:
            for key in deletes:
                txn.delete(key)
            if puts:
                txn.cursor().putmulti(puts)
        self._reader = self._env.begin()

    def scan(self, lower: bytes, upper: bytes | None) -> Iterator[tuple[bytes, bytes]]:
        with self._env.begin() as txn:
            cursor = txn.cursor()
            if not cursor.set_range(lower):
                return
            for key, value in cursor.iternext():
                if upper is not None and key >= upper:
                    return
                yield key, value

    def delete_range(self, lower: bytes, upper: bytes | None) -> None:
        self._reader.abort()
        with self._env.begin(write=True) as txn:
            cursor = txn.cursor()
            if cursor.set_range(lower):
                while cursor.key() and (upper is None or cursor.key() < upper):
                    if not cursor.delete():
                        break
        self._reader = self._env.begin()

    def disk_usage(self) -> int:
        from flott.runtime.state.rocksdb.kv_store import directory_size

        return directory_size(self.path)

    def close(self) -> None:
        self._reader.abort()
        self._env.close()


# --------------------------------------------------------------------------- one workload (child)


def make_backend(kind: str, directory: str, cache_entries: int | None) -> Any:
    from flott.runtime.state.key_groups import KeyGroupRange

    kgr = KeyGroupRange(0, 127)
    if kind == "heap":
        from flott.runtime.state.heap import HeapKeyedStateBackend

        return HeapKeyedStateBackend(128, kgr)
    from flott.runtime.state.rocksdb import RocksDBKeyedStateBackend
    from flott.runtime.state.rocksdb.store_table import DEFAULT_CACHE_ENTRIES

    factory = LmdbStore if kind == "lmdb" else None
    return RocksDBKeyedStateBackend(
        128,
        kgr,
        local_dir=directory,
        cache_entries=cache_entries or DEFAULT_CACHE_ENTRIES,
        store_factory=factory,
    )


def flush(backend: Any) -> None:
    if hasattr(backend, "flush"):
        backend.flush()


def store_disk_usage(backend: Any) -> int:
    if not hasattr(backend, "store"):
        return 0
    store = backend.store
    if hasattr(store, "flush"):
        store.flush()  # RocksDB: memtables to files, so the files hold everything
    return int(store.disk_usage())


def bytes_written() -> int:
    """Bytes this process (all its threads: RocksDB's compactions too) sent towards the disk."""
    try:
        with open("/proc/self/io") as f:
            for line in f:
                if line.startswith("write_bytes:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_value(kind: str, directory: str, cache_entries: int | None, ops: int, keys: int) -> dict[str, Any]:
    from flott.datastream.state import ValueStateDescriptor

    rng = random.Random(42)
    names = [f"{KEY_PREFIX}{i}" for i in range(keys)]
    sequence = [names[rng.randrange(keys)] for _ in range(ops)]
    backend = make_backend(kind, directory, cache_entries)
    state = backend.get_value_state(ValueStateDescriptor("counter", None))
    written = bytes_written()
    start = time.perf_counter()
    for key in sequence:
        backend.current_key = key
        state.update((state.value() or 0) + 1)
    flush(backend)
    elapsed = time.perf_counter() - start
    if hasattr(backend, "store") and hasattr(backend.store, "flush"):
        backend.store.flush()  # RocksDB: what is still in the memtable is written too
    os.sync()
    written = bytes_written() - written
    total = sum(
        sum(entries.values()) for _, states in backend.iter_key_group_entries() for entries in states.values()
    )
    assert total == ops, f"{kind}: counted {total} updates, expected {ops}"
    result = {
        "seconds": elapsed,
        "ops_per_s": ops / elapsed,
        "peak_rss_mb": peak_rss_mb(),
        "disk_write_mb": written / 1e6,
    }
    backend.dispose()
    return result


def run_snapshot(kind: str, directory: str, cache_entries: int | None, state_mb: int) -> dict[str, Any]:
    from flott.datastream.state import ValueStateDescriptor
    from flott.runtime.checkpoint.snapshot import restore_keyed_backend, snapshot_keyed_backend
    from flott.runtime.checkpoint.storage import FsspecCheckpointStorage, join

    n_keys = state_mb * 1000  # ~1 KB per entry
    backend = make_backend(kind, directory, cache_entries)
    state = backend.get_value_state(ValueStateDescriptor("blob", None))
    rng = random.Random(7)
    start = time.perf_counter()
    for i in range(n_keys):
        backend.current_key = f"{KEY_PREFIX}{i}"
        state.update((i, rng.randbytes(400).hex()))
    flush(backend)
    fill_s = time.perf_counter() - start
    storage = FsspecCheckpointStorage()
    snapshot_dir = os.path.join(directory, "chk")
    start = time.perf_counter()
    sub = snapshot_keyed_backend(
        storage, snapshot_dir, backend, operator_id="op", subtask_index=0, parallelism=1
    )
    snapshot_s = time.perf_counter() - start
    disk = store_disk_usage(backend)
    backend.dispose()
    del backend, state
    fresh = make_backend(kind, directory, cache_entries)
    start = time.perf_counter()
    restored = restore_keyed_backend(storage, fresh, [join(snapshot_dir, h.path) for h in sub.key_groups])
    flush(fresh)
    restore_s = time.perf_counter() - start
    assert restored == n_keys, f"{kind}: restored {restored} of {n_keys}"
    fresh.dispose()
    return {
        "keys": n_keys,
        "fill_s": fill_s,
        "fill_per_s": n_keys / fill_s,
        "snapshot_s": snapshot_s,
        "snapshot_bytes": sub.state_size,
        "restore_s": restore_s,
        "store_disk_mb": disk / 1e6,
        "peak_rss_mb": peak_rss_mb(),
    }


def child(args: argparse.Namespace) -> None:
    directory = tempfile.mkdtemp(prefix=f"state-bench-{args.backend}-", dir=args.dir)
    try:
        if args.child == "value":
            result = run_value(args.backend, directory, args.cache, args.ops, args.keys)
        else:
            result = run_snapshot(args.backend, directory, args.cache, args.state_mb)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    print(json.dumps(result))


# --------------------------------------------------------------------------- driver


def spawn(workload: str, backend: str, args: argparse.Namespace, cache: int | None = None) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", workload, "--backend", backend]
    cmd += ["--ops", str(args.ops), "--keys", str(args.keys), "--state-mb", str(args.state_mb)]
    if cache is not None:
        cmd += ["--cache", str(cache)]
    if args.dir:
        cmd += ["--dir", args.dir]
    label = f"{workload} {backend}" + ("" if cache is None else f" cache={cache}")
    print(f"running {label} ...", file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def available(backend: str) -> bool:
    module = {"heap": None, "rocksdb": "rocksdict", "lmdb": "lmdb"}[backend]
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        print(f"skipping {backend}: `pip install {module}` to include it", file=sys.stderr)
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--state-mb", type=int, default=200)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--dir", default=None, help="where working directories and checkpoints go")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each configuration (median shown)")
    parser.add_argument(
        "--quick", action="store_true", help="100k ops over 10k keys, 20 MB of state, 1 round"
    )
    parser.add_argument("--skip-value", action="store_true")
    parser.add_argument("--skip-snapshot", action="store_true")
    parser.add_argument("--child", choices=["value", "snapshot"], help=argparse.SUPPRESS)
    parser.add_argument("--backend", choices=BACKENDS, help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.quick:
        args.ops, args.keys, args.state_mb, args.rounds = 100_000, 10_000, 20, 1
    from flott.runtime.state.rocksdb.store_table import DEFAULT_CACHE_ENTRIES

    backends = [b for b in args.backends.split(",") if b and available(b)]
    small_cache = max(1, args.keys // 100)
    if not args.skip_value:
        configs: list[tuple[str, int | None]] = []
        for backend in backends:
            caches: list[int | None] = (
                [None] if backend == "heap" else [DEFAULT_CACHE_ENTRIES, small_cache, 1]
            )
            configs += [(backend, cache) for cache in caches]
        runs = interleaved("value", configs, args)
        rows = []
        for backend, cache in configs:
            r = runs[(backend, cache)]
            rows.append([
                backend, "–" if cache is None else f"{cache:,}", spread(r, "ops_per_s", "{:,.0f}"),
                spread(r, "disk_write_mb", "{:.0f}"), spread(r, "peak_rss_mb", "{:.0f}"),
            ])  # fmt: skip
        print(f"\nValueState get+update: {args.ops:,} ops over {args.keys:,} keys (uniform), then a flush; "
              f"median (min–max) of {args.rounds} runs\n")  # fmt: skip
        print(
            table(["backend", "object cache (entries/gen.)", "ops/s", "disk writes MB", "peak RSS MB"], rows)
        )
    if not args.skip_snapshot:
        configs = [(backend, None) for backend in backends]
        runs = interleaved("snapshot", configs, args)
        rows = []
        for backend, _ in configs:
            r = runs[(backend, None)]
            disk = spread(r, "store_disk_mb", "{:.0f}") if backend != "heap" else "–"
            rows.append([
                backend, f"{r[0]['keys']:,}", spread(r, "fill_per_s", "{:,.0f}"),
                spread(r, "snapshot_s", "{:.2f}"), f"{r[0]['snapshot_bytes'] / 1e6:.0f}",
                spread(r, "restore_s", "{:.2f}"), disk, spread(r, "peak_rss_mb", "{:.0f}"),
            ])  # fmt: skip
        print(f"\nSnapshot of ~{args.state_mb} MB of keyed state (ValueState, ~1 KB per key); "
              f"median (min–max) of {args.rounds} runs\n")  # fmt: skip
        print(table(["backend", "keys", "fill/s", "snapshot s", "snapshot MB", "restore s",
                     "store on disk MB", "peak RSS MB"], rows))  # fmt: skip


def interleaved(
    workload: str, configs: list[tuple[str, int | None]], args: argparse.Namespace
) -> dict[tuple[str, int | None], list[dict[str, Any]]]:
    """Every config once per round, round after round (so load changes hit all alike)."""
    runs: dict[tuple[str, int | None], list[dict[str, Any]]] = {config: [] for config in configs}
    for _ in range(args.rounds):
        for backend, cache in configs:
            runs[(backend, cache)].append(spawn(workload, backend, args, cache))
    return runs


def spread(results: list[dict[str, Any]], field: str, fmt: str) -> str:
    values = sorted(r[field] for r in results)
    median = statistics.median(values)
    if len(values) == 1:
        return fmt.format(median)
    return f"{fmt.format(median)} ({fmt.format(values[0])}–{fmt.format(values[-1])})"


if __name__ == "__main__":
    main()
