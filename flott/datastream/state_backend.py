"""State backends (PyFlink's ``pyflink.datastream.state_backend``).

Choosing a backend records ``state.backend.type`` (and the options the program chose) in
the job configuration: ``hashmap`` keeps keyed state as Python objects on the heap,
``rocksdb`` in an embedded RocksDB (``flott.runtime.state.rocksdb``), with incremental
checkpoints if asked (``flott.runtime.checkpoint.incremental``). Options flott does not
offer (predefined options, options factories) are refused when the job is planned
(``flott.graph.unsupported_settings``).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from flott.errors import NotYetSupportedError

BACKEND_TYPE = "state.backend.type"
INCREMENTAL = "execution.checkpointing.incremental"
ROCKSDB_LOCAL_DIRS = "state.backend.rocksdb.localdir"
ROCKSDB_PREDEFINED_OPTIONS = "state.backend.rocksdb.predefined-options"
ROCKSDB_TRANSFER_THREADS = "execution.checkpointing.rocksdb.transfer-threads"
ROCKSDB_OPTIONS_FACTORY = "state.backend.rocksdb.options-factory"


class PredefinedOptions(Enum):
    DEFAULT = 0
    SPINNING_DISK_OPTIMIZED = 1
    SPINNING_DISK_OPTIMIZED_HIGH_MEM = 2
    FLASH_SSD_OPTIMIZED = 3


class StateBackend:
    """Where keyed state lives while the job runs."""

    def to_configuration(self) -> dict[str, str]:
        raise NotImplementedError


class HashMapStateBackend(StateBackend):
    """State as Python objects on the heap (the default)."""

    def to_configuration(self) -> dict[str, str]:
        return {BACKEND_TYPE: "hashmap"}

    def __repr__(self) -> str:
        return "HashMapStateBackend()"


class EmbeddedRocksDBStateBackend(StateBackend):
    """Keyed state in an embedded RocksDB (``state.backend.type: rocksdb``); checkpoints are
    full snapshots unless ``enable_incremental_checkpointing`` (savepoints always are)."""

    def __init__(self, enable_incremental_checkpointing: bool | None = None) -> None:
        self._incremental = enable_incremental_checkpointing
        self._db_storage_paths: list[str] = []
        self._predefined_options = PredefinedOptions.DEFAULT
        self._options_factory: str | None = None
        self._transfer_threads = 4
        self._transfer_threads_set = False

    def is_incremental_checkpoints_enabled(self) -> bool:
        return bool(self._incremental)

    def set_db_storage_paths(self, *paths: str) -> None:
        self._db_storage_paths = list(paths)

    def get_db_storage_paths(self) -> list[str]:
        return list(self._db_storage_paths)

    def set_predefined_options(self, options: PredefinedOptions) -> None:
        self._predefined_options = options

    def get_predefined_options(self) -> PredefinedOptions:
        return self._predefined_options

    def set_options(self, options_factory_class_name: str) -> None:
        self._options_factory = options_factory_class_name

    def get_options(self) -> str | None:
        return self._options_factory

    def set_number_of_transfer_threads(self, number_of_transfering_threads: int) -> None:
        self._transfer_threads = number_of_transfering_threads
        self._transfer_threads_set = True

    def get_number_of_transfer_threads(self) -> int:
        return self._transfer_threads

    def to_configuration(self) -> dict[str, str]:
        # Only what the program chose: tuning flott does not offer is refused at plan time
        # (flott.graph.unsupported_settings), so defaults must not look like choices.
        out = {BACKEND_TYPE: "rocksdb"}
        if self._predefined_options is not PredefinedOptions.DEFAULT:
            out[ROCKSDB_PREDEFINED_OPTIONS] = self._predefined_options.name
        if self._transfer_threads_set:
            out[ROCKSDB_TRANSFER_THREADS] = str(self._transfer_threads)
        if self._incremental is not None:
            out[INCREMENTAL] = "true" if self._incremental else "false"
        if self._db_storage_paths:
            out[ROCKSDB_LOCAL_DIRS] = ",".join(self._db_storage_paths)
        if self._options_factory:
            out[ROCKSDB_OPTIONS_FACTORY] = self._options_factory
        return out

    def __repr__(self) -> str:
        return "EmbeddedRocksDBStateBackend()"


class CustomStateBackend(StateBackend):
    """PyFlink wraps a Java backend here; flott has no JVM."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotYetSupportedError("custom (Java) state backends are not supported by flott")


def state_backend_from_configuration(config: dict[str, str]) -> StateBackend | None:
    kind = config.get(BACKEND_TYPE)
    if kind == "hashmap":
        return HashMapStateBackend()
    if kind == "rocksdb":
        incremental = config.get(INCREMENTAL)
        backend = EmbeddedRocksDBStateBackend(None if incremental is None else incremental == "true")
        if config.get(ROCKSDB_LOCAL_DIRS):
            backend.set_db_storage_paths(*config[ROCKSDB_LOCAL_DIRS].split(","))
        return backend
    return None
