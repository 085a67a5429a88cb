"""Backends under test: every keyed state test that takes ``make_backend`` runs on each backend."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import flott.datastream  # noqa: F401  (flott.datastream first: it imports the operators, which import state)
from flott.runtime.operators.state_backend_loader import create_keyed_state_backend
from flott.runtime.state.backend import KeyedStateBackend
from flott.runtime.state.key_groups import KeyGroupRange

BACKENDS = ["hashmap", "rocksdb"]

MakeBackend = Callable[..., Any]


@pytest.fixture(params=BACKENDS)
def backend_type(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_backend(backend_type: str, tmp_path: Any) -> Iterator[MakeBackend]:
    """``make_backend(max_parallelism=128, key_group_range=None, **config)`` of the parametrized type.

    RocksDB backends live under ``tmp_path`` with a small object cache (so tests go through the
    store, not only the cache) unless the config says otherwise; all are disposed at the end.
    """
    made: list[KeyedStateBackend] = []

    def make(
        max_parallelism: int = 128,
        key_group_range: KeyGroupRange | None = None,
        **config: str,
    ) -> Any:
        job_config = {
            "state.backend.type": backend_type,
            "state.backend.rocksdb.localdir": str(tmp_path / "rocksdb"),
            "state.backend.rocksdb.object-cache.entries": "4",
            **config,
        }
        backend = create_keyed_state_backend(
            job_config,
            max_parallelism,
            key_group_range or KeyGroupRange(0, max_parallelism - 1),
            operator_id="op",
            subtask_index=0,
        )
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.dispose()
