"""Keyed state in an embedded RocksDB (``state.backend.type: rocksdb``), for state larger than memory.

Why RocksDB (``rocksdict``) and not LMDB (``lmdb``): both are on PyPI with wheels, and both ran
under the same backend code (``bench/state_backend_bench.py``, the store swapped). Measured on
the 2-core development machine while other sessions' tests loaded it (load average 6-10), so
the absolute figures are low; each cell is the median of 3 interleaved runs, two such
benchmark runs given as "run 1 / run 2":

=====================================================  =================  =================
                                                        RocksDB            LMDB
=====================================================  =================  =================
ValueState get+update, 1M ops / 100k keys, ops/s
  object cache 20k entries (20-40% of keys cached)      77 k / 93 k        152 k / 115 k
  object cache 1k entries                               49 k / 43 k        55 k / 116 k
  no cache (every access reaches the store)             41 k / 38 k        39 k / 33 k
bytes written towards the disk for those 1M updates     2 MB               25 MB
200 MB of state: snapshot s                             3.1 / 2.9          1.7 / 1.4
200 MB of state: restore s                              2.4 / 1.6          1.2 / 1.8
200 MB of state: store on disk                          173 MB             334 MB
200 MB of state: peak RSS                               317 / 330 MB       486 / 487 MB
=====================================================  =================  =================

(heap backend: 1.2-1.5 M ops/s; 200 MB: snapshot 0.9-1.1 s, restore 0.35-0.7 s, peak RSS 246 MB.)

While the data fits in RAM, LMDB is as fast or faster (up to 2x): its reads are memory-mapped
(no copy, no memtable search) and it reads snapshots back quicker. But this backend exists for state that
does *not* fit, where the disk decides, and there RocksDB wins on what we measured: an LSM tree
writes each update about once (sequentially, compressed), LMDB's copy-on-write B-tree rewrites a
4 KB page per updated key (12x the write volume above, before memory pressure turns every page
rewrite into a random read plus a write), and its file is twice the size and never shrinks.
LMDB also needs a maximum map size fixed up front (a full map fails writes), while RocksDB
grows as needed. And RocksDB is what Flink users configure (``state.backend.type: rocksdb``,
``state.backend.rocksdb.*`` keys). With the object cache (the write-back cache in
``store_table``) the hot part of the state is served from Python objects anyway, which narrows
LMDB's in-memory advantage to the misses.
"""

from flott.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["RocksDBKeyedStateBackend"]
