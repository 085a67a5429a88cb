"""Settings a program may set that flott cannot honour: refused when the job is planned.

A PyFlink program that asks for a changelog state backend,
latency markers or incremental checkpoints of the heap backend would, on flott,
silently get something else.
Flink's rule here is ours: a setting either does what Flink does or the job is
refused before it runs, with a message naming the setting and what to do. The
check reads the job's configuration (every setter writes Flink's key there, and
``-D`` / ``configuration=`` reach the same keys), so one place covers all ways
of setting a value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from flott.errors import ConfigurationError, NotYetSupportedError
from flott.runtime.scheduler.adaptivebatch.vertex_parallelism_decider import (
    DEPRECATED_PREFIX,
    ENABLED,
    PREFIX,
    SETTING_KEYS,
    AdaptiveBatchSettings,
)

__all__ = ["refuse_unsupported_settings"]


def _true(value: str) -> bool:
    return value.strip().lower() == "true"


def _positive(value: str) -> bool:
    try:
        return int(value.strip().split(" ")[0]) > 0
    except ValueError:
        return True  # unparseable: not a value we can honour either


def _not(default: str) -> Callable[[str], bool]:
    return lambda value: value.strip().upper() != default


_CHECKS: list[tuple[str, Callable[[str], bool], str]] = [
    (
        "state.changelog.enabled",
        _true,
        "the changelog state backend is not supported (remove enable_changelog_state_backend(True))",
    ),
    (
        "execution.checkpointing.snapshot-compression",
        _true,
        "snapshot compression is not supported: flott writes state snapshots uncompressed",
    ),
    (
        "execution.checkpointing.externalized-checkpoint-retention",
        _not("RETAIN_ON_CANCELLATION"),
        "flott keeps the latest completed checkpoint when a job ends (RETAIN_ON_CANCELLATION); "
        "deleting it on cancellation is not supported",
    ),
    (
        "state.backend.rocksdb.predefined-options",
        _not("DEFAULT"),
        "RocksDB predefined options are not supported: flott's RocksDB backend uses its own tuning",
    ),
    (
        "state.backend.rocksdb.options-factory",
        lambda value: bool(value.strip()),
        "RocksDB options factories are Java classes; flott has no JVM to load them",
    ),
    (
        "execution.checkpointing.rocksdb.transfer-threads",
        lambda value: True,
        "the RocksDB transfer thread count is not configurable in flott (each task uploads "
        "its incremental files on its one checkpoint writer thread)",
    ),
    (
        "metrics.latency.interval",
        _positive,
        "latency tracking (latency markers) is not supported (remove set_latency_tracking_interval())",
    ),
    (
        "task.cancellation.interval",
        _not("30000"),
        "the task cancellation interval is not configurable in flott",
    ),
    (
        "task.cancellation.timeout",
        _not("180000"),
        "the task cancellation timeout is not configurable in flott",
    ),
]


_ADAPTIVE_BATCH_HONOURED = frozenset(SETTING_KEYS) | {
    DEPRECATED_PREFIX + key[len(PREFIX) :] for key in SETTING_KEYS if key != ENABLED
}
_ADAPTIVE_BATCH_MESSAGE = (
    "flott's adaptive batch scheduler honours only the auto-parallelism settings "
    f"({', '.join(k[len(PREFIX) :] for k in SETTING_KEYS)}); speculative execution and the "
    "other adaptive batch scheduler settings are not supported (remove the setting)"
)


def _check_adaptive_batch_settings(config: Mapping[str, str]) -> None:
    """In BATCH mode the auto-parallelism settings decide what runs (flott.runtime.scheduler.
    adaptivebatch): their values must work, and the scheduler's settings flott does not honour
    (speculative execution, ...) are refused."""
    if str(config.get("execution.runtime-mode", "STREAMING")).strip().upper() != "BATCH":
        return  # they mean nothing to a STREAMING job, in Flink too
    for key, value in config.items():
        if key.startswith((PREFIX, DEPRECATED_PREFIX)) and key not in _ADAPTIVE_BATCH_HONOURED:
            raise NotYetSupportedError(f"'{key}: {value}': {_ADAPTIVE_BATCH_MESSAGE}")
    AdaptiveBatchSettings.from_config(config)


_INCREMENTAL_KEYS = ("execution.checkpointing.incremental", "state.backend.incremental")


def _refuse_incremental_without_rocksdb(config: Mapping[str, str]) -> None:
    """Incremental checkpoints are RocksDB's (its table files are what is shared); the heap
    backend would take full snapshots instead, so asking for both is refused."""
    backend = str(config.get("state.backend.type", config.get("state.backend", "hashmap"))).strip().lower()
    for key in _INCREMENTAL_KEYS:
        value = config.get(key)
        if value is not None and _true(str(value)) and backend != "rocksdb":
            raise NotYetSupportedError(
                f"'{key}: {value}': incremental checkpoints need the RocksDB state backend "
                f"(state.backend.type: rocksdb, or EmbeddedRocksDBStateBackend(True)); the "
                f"'{backend}' backend takes full snapshots"
            )


def _refuse_unaligned_combinations(config: Mapping[str, str]) -> None:
    """Unaligned checkpoints are honoured (flott.runtime.tasks.checkpoint_barrier_aligner), but not
    together with what flott does not do for them: switching from aligned to unaligned after an
    alignment timeout, and several checkpoints in flight (their channel states would overlap)."""
    keys = ("execution.checkpointing.unaligned.enabled", "execution.checkpointing.unaligned.forced")
    if not any(_true(str(config.get(k, "false"))) for k in keys):
        return
    timeouts = (
        "execution.checkpointing.aligned-checkpoint-timeout",
        "execution.checkpointing.alignment-timeout",
    )
    for key in timeouts:
        value = config.get(key)
        if value is not None and _positive(str(value)):
            raise NotYetSupportedError(
                f"'{key}: {value}': starting checkpoints aligned and switching to unaligned after a "
                "timeout is not supported: flott's unaligned checkpoints are unaligned from their first "
                "barrier (leave the aligned checkpoint timeout at 0)"
            )
    concurrent = str(config.get("execution.checkpointing.max-concurrent-checkpoints", "1")).strip()
    if concurrent not in ("", "1"):
        raise NotYetSupportedError(
            f"'execution.checkpointing.max-concurrent-checkpoints: {concurrent}': unaligned checkpoints "
            "take one checkpoint at a time in flott (set max concurrent checkpoints to 1)"
        )


def refuse_unsupported_settings(config: Mapping[str, str]) -> None:
    """Raise NotYetSupportedError for the first setting flott would otherwise ignore
    (ConfigurationError for a checkpointing mode that does not exist)."""
    for key, unsupported, message in _CHECKS:
        value = config.get(key)
        if value is not None and unsupported(str(value)):
            raise NotYetSupportedError(f"'{key}: {value}': {message}")
    _refuse_incremental_without_rocksdb(config)
    _refuse_unaligned_combinations(config)
    _check_adaptive_batch_settings(config)
    mode = config.get("execution.checkpointing.mode")
    if mode is not None and mode.strip().upper().replace("-", "_") not in ("EXACTLY_ONCE", "AT_LEAST_ONCE"):
        raise ConfigurationError(
            f"'execution.checkpointing.mode: {mode}': expected EXACTLY_ONCE or AT_LEAST_ONCE"
        )
