"""What user functions see of their task (Flink's StreamingRuntimeContext).

Handed to ``Function.open(runtime_context)``. Keyed state is only available on
keyed operators (after ``key_by``), where it is scoped to the key of the record
being processed; asking for it elsewhere is the same mistake Flink reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flott.api.common.functions import RuntimeContext
from flott.errors import FlottError
from flott.runtime.metrics.groups import TaskMetricGroup
from flott.runtime.metrics.registry import MetricRegistry

if TYPE_CHECKING:
    from flott.metrics import MetricGroup
    from flott.runtime.execution.environment import TaskEnvironment
    from flott.runtime.state.backend import KeyedStateBackend

GLOBAL_JOB_PARAMETERS_KEY = "pipeline.global-job-parameters"


def parse_job_parameters(value: str) -> dict[str, str]:
    """Flink's map option format ``k1:v1,k2:v2`` (``pipeline.global-job-parameters``)."""
    out: dict[str, str] = {}
    for item in value.split(","):
        if not item.strip():
            continue
        key, sep, val = item.partition(":")
        if sep:
            out[key.strip().strip("'\"")] = val.strip().strip("'\"")
    return out


class StreamingRuntimeContext(RuntimeContext):
    """The runtime context of one operator in one subtask."""

    def __init__(
        self,
        env: TaskEnvironment,
        backend: KeyedStateBackend | None,
        operator_id: str = "",
        operator_name: str | None = None,
    ) -> None:
        self._env = env
        self._backend = backend
        self._operator_id = operator_id
        self._operator_name = operator_name if operator_name is not None else env.vertex.name
        raw = env.job_config.get(GLOBAL_JOB_PARAMETERS_KEY)
        self._job_parameters = parse_job_parameters(raw) if raw else {}

    # --- task information -------------------------------------------------------------------

    def get_task_name(self) -> str:
        return self._env.vertex.name

    def get_task_name_with_subtasks(self) -> str:
        return self._env.task_name_with_subtasks

    def get_number_of_parallel_subtasks(self) -> int:
        return self._env.parallelism

    def get_max_number_of_parallel_subtasks(self) -> int:
        return self._env.max_parallelism

    def get_index_of_this_subtask(self) -> int:
        return self._env.subtask_index

    def get_attempt_number(self) -> int:
        return self._env.attempt_number

    def get_job_parameter(self, key: str, default_value: Any = None) -> Any:
        """A global job parameter; falls back to the job configuration entry of the same key."""
        if key in self._job_parameters:
            return self._job_parameters[key]
        return self._env.job_config.get(key, default_value)

    def get_metrics_group(self) -> MetricGroup:
        """The operator's metric group (Flink's operator scope); register metrics in ``open()``."""
        env = self._env
        if env.metric_group is None:  # an operator run outside a TaskExecutor (tests, tools)
            env.metric_group = TaskMetricGroup(
                MetricRegistry(), "localhost", "", env.job_id, env.job_name, env.vertex.name,
                env.subtask_index, env.attempt_number,
            )
        group = env.metric_group
        return group.get_or_add_operator(self._operator_id or self._operator_name, self._operator_name)

    # --- keyed state -------------------------------------------------------------------------

    def _keyed_backend(self) -> KeyedStateBackend:
        if self._backend is None:
            raise FlottError(
                "Keyed state can only be used on a 'keyed stream', i.e., after a 'key_by()' operation."
            )
        return self._backend

    def get_state(self, state_descriptor: Any) -> Any:
        return self._keyed_backend().get_value_state(state_descriptor)

    def get_list_state(self, state_descriptor: Any) -> Any:
        return self._keyed_backend().get_list_state(state_descriptor)

    def get_map_state(self, state_descriptor: Any) -> Any:
        return self._keyed_backend().get_map_state(state_descriptor)

    def get_reducing_state(self, state_descriptor: Any) -> Any:
        return self._keyed_backend().get_reducing_state(state_descriptor)

    def get_aggregating_state(self, state_descriptor: Any) -> Any:
        return self._keyed_backend().get_aggregating_state(state_descriptor)
