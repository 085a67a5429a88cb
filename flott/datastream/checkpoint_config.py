"""CheckpointConfig (PyFlink's ``pyflink.datastream.checkpoint_config``) over the job configuration.

Settings are stored under Flink 2.x keys in the configuration that travels with
the JobGraph, where the checkpoint coordinator and the tasks read them (interval,
mode, timeout, pauses, concurrency, tolerable failures, unaligned checkpoints). What
flott cannot honour (deleting the last checkpoint on cancellation, an aligned checkpoint
timeout with unaligned checkpoints) is refused when the job is planned, by
:mod:`flott.graph.unsupported_settings`.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from enum import Enum
from typing import Any

from flott.api.common.durations import to_millis
from flott.common import Duration
from flott.datastream.checkpointing_mode import CheckpointingMode

INTERVAL = "execution.checkpointing.interval"
MODE = "execution.checkpointing.mode"
TIMEOUT = "execution.checkpointing.timeout"
MIN_PAUSE = "execution.checkpointing.min-pause"
MAX_CONCURRENT = "execution.checkpointing.max-concurrent-checkpoints"
TOLERABLE_FAILURES = "execution.checkpointing.tolerable-failed-checkpoints"
EXTERNALIZED_RETENTION = "execution.checkpointing.externalized-checkpoint-retention"
UNALIGNED = "execution.checkpointing.unaligned.enabled"
UNALIGNED_FORCED = "execution.checkpointing.unaligned.forced"
ALIGNED_TIMEOUT = "execution.checkpointing.aligned-checkpoint-timeout"

DEFAULT_TIMEOUT_MS = 600_000
MAX_INT = 2**31 - 1


class ExternalizedCheckpointRetention(Enum):
    """What happens to the last checkpoint when the job is cancelled."""

    DELETE_ON_CANCELLATION = 0
    RETAIN_ON_CANCELLATION = 1
    NO_EXTERNALIZED_CHECKPOINTS = 2


# PyFlink 1.x name of the same enum.
ExternalizedCheckpointCleanup = ExternalizedCheckpointRetention


class CheckpointConfig:
    """Typed view over the checkpointing keys of the environment's configuration."""

    def __init__(self, configuration: MutableMapping[str, str]) -> None:
        self._config = configuration

    def _int(self, key: str, default: int) -> int:
        return int(self._config.get(key, str(default)))

    # --- enabling -------------------------------------------------------------------------------

    def is_checkpointing_enabled(self) -> bool:
        return self.get_checkpoint_interval() > 0

    def get_checkpoint_interval(self) -> int:
        return self._int(INTERVAL, -1)

    def set_checkpoint_interval(self, checkpoint_interval: int) -> CheckpointConfig:
        interval = to_millis(checkpoint_interval)
        if interval < 10:
            raise ValueError("Checkpoint interval must be larger than or equal to 10 ms")
        self._config[INTERVAL] = str(interval)
        return self

    def get_checkpointing_mode(self) -> CheckpointingMode:
        return CheckpointingMode[self._config.get(MODE, CheckpointingMode.EXACTLY_ONCE.name)]

    def set_checkpointing_mode(self, checkpointing_mode: CheckpointingMode) -> CheckpointConfig:
        self._config[MODE] = checkpointing_mode.name
        return self

    # PyFlink 2.x names of the same setting.
    get_checkpointing_consistency_mode = get_checkpointing_mode
    set_checkpointing_consistency_mode = set_checkpointing_mode

    # --- timing ---------------------------------------------------------------------------------

    def get_checkpoint_timeout(self) -> int:
        return self._int(TIMEOUT, DEFAULT_TIMEOUT_MS)

    def set_checkpoint_timeout(self, checkpoint_timeout: int) -> CheckpointConfig:
        timeout = to_millis(checkpoint_timeout)
        if timeout < 1:
            raise ValueError("Checkpoint timeout must be larger than or equal to 1 ms")
        self._config[TIMEOUT] = str(timeout)
        return self

    def get_min_pause_between_checkpoints(self) -> int:
        return self._int(MIN_PAUSE, 0)

    def set_min_pause_between_checkpoints(self, min_pause_between_checkpoints: int) -> CheckpointConfig:
        pause = to_millis(min_pause_between_checkpoints)
        if pause < 0:
            raise ValueError("Pause value must be zero or positive")
        self._config[MIN_PAUSE] = str(pause)
        return self

    def get_max_concurrent_checkpoints(self) -> int:
        return self._int(MAX_CONCURRENT, 1)

    def set_max_concurrent_checkpoints(self, max_concurrent_checkpoints: int) -> CheckpointConfig:
        if max_concurrent_checkpoints < 1:
            raise ValueError("The maximum number of concurrent attempts must be at least one.")
        self._config[MAX_CONCURRENT] = str(max_concurrent_checkpoints)
        return self

    # --- failures -------------------------------------------------------------------------------

    def get_tolerable_checkpoint_failure_number(self) -> int:
        return self._int(TOLERABLE_FAILURES, 0)

    def set_tolerable_checkpoint_failure_number(
        self, tolerable_checkpoint_failure_number: int
    ) -> CheckpointConfig:
        if tolerable_checkpoint_failure_number < 0:
            raise ValueError("The tolerable failure checkpoint number must be non-negative.")
        self._config[TOLERABLE_FAILURES] = str(tolerable_checkpoint_failure_number)
        return self

    def is_fail_on_checkpointing_errors(self) -> bool:
        return self.get_tolerable_checkpoint_failure_number() == 0

    def set_fail_on_checkpointing_errors(self, fail_on_checkpointing_errors: bool) -> CheckpointConfig:
        """Deprecated in Flink: True means tolerate no failed checkpoint, False tolerate any."""
        return self.set_tolerable_checkpoint_failure_number(0 if fail_on_checkpointing_errors else MAX_INT)

    # --- retention ------------------------------------------------------------------------------

    def get_externalized_checkpoint_retention(self) -> ExternalizedCheckpointRetention | None:
        value = self._config.get(EXTERNALIZED_RETENTION)
        return ExternalizedCheckpointRetention[value] if value else None

    def set_externalized_checkpoint_retention(
        self, retention_mode: ExternalizedCheckpointRetention
    ) -> CheckpointConfig:
        self._config[EXTERNALIZED_RETENTION] = retention_mode.name
        return self

    # PyFlink 1.x names.
    enable_externalized_checkpoints = set_externalized_checkpoint_retention
    get_externalized_checkpoint_cleanup = get_externalized_checkpoint_retention

    def is_externalized_checkpoints_enabled(self) -> bool:
        retention = self.get_externalized_checkpoint_retention()
        return retention not in (None, ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS)

    # --- unaligned checkpoints ------------------------------------------------------------------

    def enable_unaligned_checkpoints(self, enabled: bool = True) -> CheckpointConfig:
        self._config[UNALIGNED] = "true" if enabled else "false"
        return self

    def disable_unaligned_checkpoints(self) -> CheckpointConfig:
        return self.enable_unaligned_checkpoints(False)

    def is_unaligned_checkpoints_enabled(self) -> bool:
        return self._config.get(UNALIGNED, "false") == "true"

    def set_force_unaligned_checkpoints(self, force_unaligned_checkpoints: bool = True) -> CheckpointConfig:
        self._config[UNALIGNED_FORCED] = "true" if force_unaligned_checkpoints else "false"
        return self

    def is_force_unaligned_checkpoints(self) -> bool:
        return self._config.get(UNALIGNED_FORCED, "false") == "true"

    def set_aligned_checkpoint_timeout(self, alignment_timeout: Any) -> CheckpointConfig:
        self._config[ALIGNED_TIMEOUT] = str(to_millis(alignment_timeout))
        return self

    set_alignment_timeout = set_aligned_checkpoint_timeout

    def get_aligned_checkpoint_timeout(self) -> Any:
        return Duration.of_millis(self._int(ALIGNED_TIMEOUT, 0))

    get_alignment_timeout = get_aligned_checkpoint_timeout

    # --- storage (PyFlink 1.x API) --------------------------------------------------------------

    def set_checkpoint_storage(self, storage: Any) -> CheckpointConfig:
        from flott.datastream.checkpoint_storage import CheckpointStorage

        if not isinstance(storage, CheckpointStorage):
            raise TypeError(f"expected a CheckpointStorage, got {type(storage).__name__}")
        self._config.update(storage.to_configuration())
        return self

    def set_checkpoint_storage_dir(self, checkpoint_path: str) -> CheckpointConfig:
        from flott.datastream.checkpoint_storage import FileSystemCheckpointStorage

        return self.set_checkpoint_storage(FileSystemCheckpointStorage(checkpoint_path))

    def get_checkpoint_storage(self) -> Any:
        from flott.datastream.checkpoint_storage import checkpoint_storage_from_configuration

        return checkpoint_storage_from_configuration(self._config)
