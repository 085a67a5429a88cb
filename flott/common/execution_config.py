"""``ExecutionConfig``: per-job execution settings (parallelism, watermark interval, ...).

Only the settings that mean something without a JVM do anything in flott;
the Kryo/Avro/POJO switches are kept as recorded flags so PyFlink programs that
call them still run.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ExecutionConfig"]

PARALLELISM_DEFAULT = -1
"""The "use the environment's default" parallelism marker (Flink's ``PARALLELISM_DEFAULT``)."""


class ExecutionConfig:
    """Settings that apply to one job's execution."""

    PARALLELISM_DEFAULT = PARALLELISM_DEFAULT
    PARALLELISM_UNKNOWN = -2  # Flink's marker for "not known yet" (never set by flott)

    def __init__(self, j_execution_config: Any = None) -> None:
        self._parallelism = PARALLELISM_DEFAULT
        self._max_parallelism = -1
        self._auto_watermark_interval = 200
        self._latency_tracking_interval = 0
        self._task_cancellation_interval = 30_000
        self._task_cancellation_timeout = 180_000
        self._object_reuse = False
        self._closure_cleaner = True
        self._generic_types = True
        self._force_kryo = False
        self._force_avro = False
        self._auto_generated_uids = True
        self._snapshot_compression = False
        self._global_job_parameters: dict[str, str] = {}
        self._registered_kryo_types: list[str] = []
        self._registered_pojo_types: list[str] = []
        self._default_kryo_serializer_classes: dict[str, str] = {}

    # parallelism -----------------------------------------------------------------------

    def get_parallelism(self) -> int:
        return self._parallelism

    def set_parallelism(self, parallelism: int) -> ExecutionConfig:
        if parallelism != PARALLELISM_DEFAULT and parallelism < 1:
            raise ValueError("Parallelism must be at least one, or -1 (use system default).")
        self._parallelism = parallelism
        return self

    def get_max_parallelism(self) -> int:
        return self._max_parallelism

    def set_max_parallelism(self, max_parallelism: int) -> ExecutionConfig:
        if max_parallelism < 1 or max_parallelism > 32768:
            raise ValueError("Maximum parallelism must be between 1 and 32768.")
        self._max_parallelism = max_parallelism
        return self

    # time ----------------------------------------------------------------------------

    def get_auto_watermark_interval(self) -> int:
        return self._auto_watermark_interval

    def set_auto_watermark_interval(self, interval: int) -> ExecutionConfig:
        if interval < 0:
            raise ValueError("Auto watermark interval must not be negative.")
        self._auto_watermark_interval = interval
        return self

    def get_latency_tracking_interval(self) -> int:
        return self._latency_tracking_interval

    def set_latency_tracking_interval(self, interval: int) -> ExecutionConfig:
        self._latency_tracking_interval = interval
        return self

    def get_task_cancellation_interval(self) -> int:
        return self._task_cancellation_interval

    def set_task_cancellation_interval(self, interval: int) -> ExecutionConfig:
        self._task_cancellation_interval = interval
        return self

    def get_task_cancellation_timeout(self) -> int:
        return self._task_cancellation_timeout

    def set_task_cancellation_timeout(self, timeout: int) -> ExecutionConfig:
        if timeout < 0:
            raise ValueError("Timeout value must be >= 0.")
        self._task_cancellation_timeout = timeout
        return self

    # switches ------------------------------------------------------------------------

    def enable_object_reuse(self) -> ExecutionConfig:
        self._object_reuse = True
        return self

    def disable_object_reuse(self) -> ExecutionConfig:
        self._object_reuse = False
        return self

    def is_object_reuse_enabled(self) -> bool:
        return self._object_reuse

    def enable_closure_cleaner(self) -> ExecutionConfig:
        self._closure_cleaner = True
        return self

    def disable_closure_cleaner(self) -> ExecutionConfig:
        self._closure_cleaner = False
        return self

    def is_closure_cleaner_enabled(self) -> bool:
        return self._closure_cleaner

    def enable_generic_types(self) -> ExecutionConfig:
        self._generic_types = True
        return self

    def disable_generic_types(self) -> ExecutionConfig:
        self._generic_types = False
        return self

    def has_generic_types_disabled(self) -> bool:
        return not self._generic_types

    def enable_force_kryo(self) -> ExecutionConfig:
        self._force_kryo = True
        return self

    def disable_force_kryo(self) -> ExecutionConfig:
        self._force_kryo = False
        return self

    def is_force_kryo_enabled(self) -> bool:
        return self._force_kryo

    def enable_force_avro(self) -> ExecutionConfig:
        self._force_avro = True
        return self

    def disable_force_avro(self) -> ExecutionConfig:
        self._force_avro = False
        return self

    def is_force_avro_enabled(self) -> bool:
        return self._force_avro

    def enable_auto_generated_uids(self) -> ExecutionConfig:
        self._auto_generated_uids = True
        return self

    def disable_auto_generated_uids(self) -> ExecutionConfig:
        self._auto_generated_uids = False
        return self

    def has_auto_generated_uids_enabled(self) -> bool:
        return self._auto_generated_uids

    def is_use_snapshot_compression(self) -> bool:
        return self._snapshot_compression

    def set_use_snapshot_compression(self, use_snapshot_compression: bool) -> ExecutionConfig:
        self._snapshot_compression = use_snapshot_compression
        return self

    # job parameters and (JVM-only) registrations -----------------------------------------

    def get_global_job_parameters(self) -> dict[str, str]:
        return dict(self._global_job_parameters)

    def set_global_job_parameters(self, global_job_parameters_dict: dict[str, Any]) -> ExecutionConfig:
        self._global_job_parameters = {str(k): str(v) for k, v in global_job_parameters_dict.items()}
        return self

    def get_registered_kryo_types(self) -> list[str]:
        return list(self._registered_kryo_types)

    def get_registered_pojo_types(self) -> list[str]:
        return list(self._registered_pojo_types)

    def get_default_kryo_serializer_classes(self) -> dict[str, str]:
        return dict(self._default_kryo_serializer_classes)

    def to_dict(self) -> dict[str, str]:
        """The settings as Flink configuration keys (what the runtime reads from the JobGraph)."""
        out = {
            "pipeline.auto-watermark-interval": f"{self._auto_watermark_interval} ms",
            "pipeline.object-reuse": "true" if self._object_reuse else "false",
            "task.cancellation.interval": str(self._task_cancellation_interval),
            "task.cancellation.timeout": str(self._task_cancellation_timeout),
            "execution.checkpointing.snapshot-compression": "true" if self._snapshot_compression else "false",
        }
        if self._parallelism != PARALLELISM_DEFAULT:
            out["parallelism.default"] = str(self._parallelism)
        if self._max_parallelism > 0:
            out["pipeline.max-parallelism"] = str(self._max_parallelism)
        if self._latency_tracking_interval > 0:
            out["metrics.latency.interval"] = str(self._latency_tracking_interval)
        if self._global_job_parameters:
            out["pipeline.global-job-parameters"] = ",".join(
                f"{k}:{v}" for k, v in self._global_job_parameters.items()
            )
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExecutionConfig) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((self._parallelism, self._max_parallelism, self._auto_watermark_interval))
