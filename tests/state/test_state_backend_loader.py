"""``state.backend.type`` picks the backend; bad values are errors that name the key."""

from __future__ import annotations

import os
from typing import Any

import pytest

from flott.configuration import parse_memory_size
from flott.errors import ConfigurationError
from flott.runtime.operators.state_backend_loader import create_keyed_state_backend, state_backend_type
from flott.runtime.state import KeyedStateBackend
from flott.runtime.state.heap import HeapKeyedStateBackend
from flott.runtime.state.key_groups import KeyGroupRange
from flott.runtime.state.rocksdb import RocksDBKeyedStateBackend

KGR = KeyGroupRange(0, 127)


def create(config: dict[str, str]) -> Any:
    return create_keyed_state_backend(config, 128, KGR, operator_id="op-1", subtask_index=2)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({}, "hashmap"),
        ({"state.backend.type": "hashmap"}, "hashmap"),
        ({"state.backend.type": "HashMap"}, "hashmap"),
        ({"state.backend.type": "filesystem"}, "hashmap"),
        ({"state.backend.type": "jobmanager"}, "hashmap"),
        ({"state.backend.type": " rocksdb "}, "rocksdb"),
        ({"state.backend.type": "ROCKSDB"}, "rocksdb"),
        ({"state.backend": "rocksdb"}, "rocksdb"),
        ({"state.backend": "rocksdb", "state.backend.type": "hashmap"}, "hashmap"),
    ],
)
def test_backend_type_values(config: dict[str, str], expected: str) -> None:
    assert state_backend_type(config) == expected


def test_unknown_backend_is_an_error_naming_the_key() -> None:
    with pytest.raises(ConfigurationError, match=r"'forst'.*'state\.backend\.type'.*hashmap.*rocksdb"):
        create({"state.backend.type": "forst"})
    with pytest.raises(ConfigurationError, match=r"'state\.backend'"):
        create({"state.backend": "memory"})


def test_default_is_the_heap_backend() -> None:
    backend = create({})
    assert isinstance(backend, HeapKeyedStateBackend)
    assert isinstance(backend, KeyedStateBackend)
    assert backend.key_group_range == KGR and backend.max_parallelism == 128


def test_rocksdb_backend_in_the_configured_local_dir(tmp_path: Any) -> None:
    backend = create(
        {
            "state.backend.type": "rocksdb",
            "state.backend.rocksdb.localdir": str(tmp_path / "local"),
            "io.tmp.dirs": str(tmp_path / "io"),
            "state.backend.rocksdb.block.cache-size": "8 mb",
            "state.backend.rocksdb.writebuffer.size": "16mb",
            "state.backend.rocksdb.object-cache.entries": "1000",
            "state.backend.rocksdb.compaction.style": "universal",
        }
    )
    try:
        assert isinstance(backend, RocksDBKeyedStateBackend)
        options = open(os.path.join(backend.working_dir, "db", sorted(
            f for f in os.listdir(os.path.join(backend.working_dir, "db")) if f.startswith("OPTIONS-")
        )[-1])).read()  # fmt: skip
        assert "compaction_style=kCompactionStyleUniversal" in options
        assert isinstance(backend, KeyedStateBackend)
        assert os.path.dirname(backend.working_dir) == str(tmp_path / "local")
        assert os.path.basename(backend.working_dir).startswith(f"flott-rocksdb-{os.getpid()}-op-1-2-")
    finally:
        backend.dispose()
    assert not os.path.exists(backend.working_dir)


def test_rocksdb_falls_back_to_io_tmp_dirs(tmp_path: Any) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    backend = create({"state.backend.type": "rocksdb", "io.tmp.dirs": f"{first},{second}"})
    try:
        assert os.path.dirname(backend.working_dir) == str(first)
    finally:
        backend.dispose()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("state.backend.rocksdb.block.cache-size", "lots"),
        ("state.backend.rocksdb.writebuffer.size", "12 parsecs"),
        ("state.backend.rocksdb.object-cache.entries", "0"),
        ("state.backend.rocksdb.compaction.style", "SIDEWAYS"),
    ],
)
def test_bad_rocksdb_options_name_the_key(key: str, value: str, tmp_path: Any) -> None:
    with pytest.raises(ConfigurationError, match=key.replace(".", r"\.")):
        create({"state.backend.type": "rocksdb", "state.backend.rocksdb.localdir": str(tmp_path), key: value})
    assert os.listdir(tmp_path) == [], "nothing is left behind"


def test_memory_sizes() -> None:
    assert parse_memory_size("k", "4096") == 4096
    assert parse_memory_size("k", "64mb") == 64 << 20
    assert parse_memory_size("k", "1 GB") == 1 << 30
    assert parse_memory_size("k", "8kb") == 8 << 10
