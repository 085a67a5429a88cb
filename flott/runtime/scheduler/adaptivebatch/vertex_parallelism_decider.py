"""Which parallelism each vertex of a BATCH job runs with (Flink's AdaptiveBatchScheduler rules).

Pure and synchronous: settings in, decisions out; the ExecutionGraph asks, the JobMaster's
asyncio shell never decides anything here.

Flink 2.x runs BATCH jobs with its adaptive batch scheduler (``execution.batch.adaptive.
auto-parallelism.enabled``, on by default). Every exchange between two tasks is BLOCKING:
the producer writes its whole output before any consumer is deployed. The parallelism of a
vertex the user did not configure explicitly is decided only when its producers finished,
from the bytes they produced: ``ceil(bytes / avg-data-volume-per-task)``, clamped to
``[min-parallelism, max-parallelism]`` (and to the vertex's max parallelism). Which vertices
count as configured: a vertex is configured when one of its chained operators had
``set_parallelism()`` called on it (or is non-parallel by nature: ``from_collection``,
``window_all``, ``force_non_parallel``). ``env.set_parallelism(n)`` (or ``parallelism.default``)
does *not* configure the operators created after it; it only becomes the upper bound
``max-parallelism`` falls back to (else 128). So a program that sets ``env.set_parallelism(2)``
and processes a few KiB runs its keyed stage at parallelism 1, as PyFlink does.

Details kept from Flink:

* sources not configured get ``default-source-parallelism`` (falls back to ``max-parallelism``),
  at most their max parallelism;
* vertices connected by forward edges form a *forward group* with one parallelism: a
  configured member's, else the one decided for the first member that becomes schedulable;
* the max parallelism of a vertex whose max parallelism was not configured is the adaptive
  ``max-parallelism`` (it is the number of subpartitions its producers write, and its key
  groups); broadcast inputs do not count towards the bytes;
* at least ``ceil(subpartitions / 32768)`` subtasks, so none reads too many subpartitions.

What differs: Flink spreads the bytes of an all-to-all input over the decided subtasks by
the bytes of each subpartition (and may pick a parallelism near the computed one to balance
them); flott gives each subtask an equal share of the subpartitions (the key-group ranges of
keyed state), which decides the same parallelism but may balance skewed keys less well.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from flott.configuration import parse_memory_size
from flott.errors import ConfigurationError, NotYetSupportedError
from flott.runtime.jobgraph import JobGraph
from flott.runtime.state.key_groups import compute_key_group_range_for_operator_index

__all__ = [
    "AdaptiveBatchSettings",
    "ConsumedResult",
    "ForwardGroups",
    "consumed_subpartitions",
    "decide_parallelism",
]

PREFIX = "execution.batch.adaptive.auto-parallelism."
DEPRECATED_PREFIX = "jobmanager.adaptive-batch-scheduler."
ENABLED = PREFIX + "enabled"
MIN_PARALLELISM = PREFIX + "min-parallelism"
MAX_PARALLELISM = PREFIX + "max-parallelism"
AVG_DATA_VOLUME_PER_TASK = PREFIX + "avg-data-volume-per-task"
DEFAULT_SOURCE_PARALLELISM = PREFIX + "default-source-parallelism"
SETTING_KEYS = (
    ENABLED, MIN_PARALLELISM, MAX_PARALLELISM, AVG_DATA_VOLUME_PER_TASK, DEFAULT_SOURCE_PARALLELISM
)
"""The adaptive batch settings flott honours; their deprecated ``jobmanager.adaptive-batch-scheduler.``
spellings (but ``enabled``, which has none) mean the same."""

BATCH_SHUFFLE_MODE = "execution.batch-shuffle-mode"
"""``ALL_EXCHANGES_BLOCKING`` (Flink's default: the adaptive batch scheduler) or
``ALL_EXCHANGES_PIPELINED`` (Flink's default scheduler: pipelined exchanges, the parallelism asked
for); the hybrid modes are not supported."""
SHUFFLE_MODES = ("ALL_EXCHANGES_BLOCKING", "ALL_EXCHANGES_PIPELINED")

DEFAULT_MAX_PARALLELISM = 128
DEFAULT_AVG_DATA_VOLUME_PER_TASK = 16 << 20
MAX_SUBPARTITIONS_PER_TASK = 32768
"""A subtask consumes at most this many subpartitions of one result (Flink's limit)."""


def _setting(config: Mapping[str, str], key: str) -> str | None:
    value = config.get(key)
    if value is None and key != ENABLED:
        value = config.get(DEPRECATED_PREFIX + key[len(PREFIX) :])
    return value


def _positive_int(key: str, value: str) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        number = 0
    if number < 1:
        raise ConfigurationError(f"'{key}: {value}': expected a positive integer")
    return number


@dataclass(frozen=True)
class AdaptiveBatchSettings:
    """``execution.batch.adaptive.auto-parallelism.*`` of one job, resolved with Flink's fallbacks."""

    enabled: bool = True
    """False: ``enabled: false`` or ``execution.batch-shuffle-mode: ALL_EXCHANGES_PIPELINED``."""
    min_parallelism: int = 1
    max_parallelism: int = DEFAULT_MAX_PARALLELISM
    avg_data_volume_per_task: int = DEFAULT_AVG_DATA_VOLUME_PER_TASK
    default_source_parallelism: int = DEFAULT_MAX_PARALLELISM

    @staticmethod
    def from_config(
        config: Mapping[str, str], env_parallelism: int | None = None
    ) -> AdaptiveBatchSettings:
        """The job's settings; ConfigurationError names a value that cannot work.

        ``max-parallelism`` falls back to the job's ``parallelism.default`` (what
        ``env.set_parallelism`` writes), then to ``env_parallelism`` (the parallelism the
        environment gave the operators: a local environment's is the number of CPUs, as in
        Flink's local environment) and then to 128; ``default-source-parallelism`` to
        ``max-parallelism``.
        """
        enabled_value = _setting(config, ENABLED)
        enabled = True
        if enabled_value is not None:
            if enabled_value.strip().lower() not in ("true", "false"):
                raise ConfigurationError(f"'{ENABLED}: {enabled_value}': expected true or false")
            enabled = enabled_value.strip().lower() == "true"
        shuffle_mode = config.get(BATCH_SHUFFLE_MODE, SHUFFLE_MODES[0]).strip().upper()
        if shuffle_mode not in SHUFFLE_MODES:
            raise NotYetSupportedError(
                f"'{BATCH_SHUFFLE_MODE}: {config[BATCH_SHUFFLE_MODE]}': flott supports "
                f"{' and '.join(SHUFFLE_MODES)} (hybrid shuffles are not supported)"
            )
        if shuffle_mode == "ALL_EXCHANGES_PIPELINED":
            enabled = False  # Flink then runs the job with its default scheduler, pipelined
        raw_min = _setting(config, MIN_PARALLELISM)
        min_parallelism = _positive_int(MIN_PARALLELISM, raw_min) if raw_min is not None else 1
        raw_max = _setting(config, MAX_PARALLELISM)
        if raw_max is not None:
            max_parallelism = _positive_int(MAX_PARALLELISM, raw_max)
        elif config.get("parallelism.default") is not None:
            max_parallelism = _positive_int("parallelism.default", config["parallelism.default"])
        elif env_parallelism is not None and env_parallelism > 0:
            max_parallelism = env_parallelism
        else:
            max_parallelism = DEFAULT_MAX_PARALLELISM
        if max_parallelism < min_parallelism:
            raise ConfigurationError(
                f"'{MAX_PARALLELISM}' ({max_parallelism}) must not be smaller than "
                f"'{MIN_PARALLELISM}' ({min_parallelism})"
            )
        raw_volume = _setting(config, AVG_DATA_VOLUME_PER_TASK)
        volume = DEFAULT_AVG_DATA_VOLUME_PER_TASK
        if raw_volume is not None:
            volume = parse_memory_size(AVG_DATA_VOLUME_PER_TASK, raw_volume)
            if volume < 1:
                raise ConfigurationError(f"'{AVG_DATA_VOLUME_PER_TASK}: {raw_volume}': must be positive")
        raw_source = _setting(config, DEFAULT_SOURCE_PARALLELISM)
        source = max_parallelism
        if raw_source is not None:
            source = _positive_int(DEFAULT_SOURCE_PARALLELISM, raw_source)
        return AdaptiveBatchSettings(enabled, min_parallelism, max_parallelism, volume, source)


@dataclass(frozen=True)
class ConsumedResult:
    """One input of a vertex as its finished producers left it (Flink's BlockingResultInfo)."""

    num_bytes: int
    """Bytes all producer subtasks wrote for this edge (pickled batches)."""
    num_subpartitions: int
    broadcast: bool = False


def decide_parallelism(
    settings: AdaptiveBatchSettings, consumed: Sequence[ConsumedResult], vertex_max_parallelism: int
) -> int:
    """The parallelism of a vertex nobody configured, given what it consumes (nothing: a source)."""
    if vertex_max_parallelism < 1:
        raise ValueError(f"vertex max parallelism must be >= 1, got {vertex_max_parallelism}")
    if not consumed:
        return min(settings.default_source_parallelism, vertex_max_parallelism)
    low = min(settings.min_parallelism, vertex_max_parallelism)
    high = min(settings.max_parallelism, vertex_max_parallelism)
    counted = [r for r in consumed if not r.broadcast]
    if not counted:
        return low
    total = sum(r.num_bytes for r in counted)
    parallelism = math.ceil(total / settings.avg_data_volume_per_task)
    widest = max(r.num_subpartitions for r in counted)
    parallelism = max(parallelism, math.ceil(widest / MAX_SUBPARTITIONS_PER_TASK))
    return max(low, min(high, parallelism))


def consumed_subpartitions(
    num_subpartitions: int, consumer_parallelism: int, consumer_index: int, broadcast: bool = False
) -> range:
    """The subpartitions consumer subtask ``consumer_index`` reads of each producer.

    A producer whose consumer's parallelism was not known when it ran writes one subpartition
    per key group (the consumer's max parallelism); subtask ``i`` of ``p`` reads the key-group
    range keyed state gives it, a contiguous share. A broadcast result holds the whole data in
    every subpartition: each subtask reads one.
    """
    if broadcast:
        return range(consumer_index, consumer_index + 1)
    kgr = compute_key_group_range_for_operator_index(num_subpartitions, consumer_parallelism, consumer_index)
    return range(kgr.start_key_group, kgr.end_key_group + 1)


class ForwardGroups:
    """Vertices joined by forward edges (Flink's ForwardGroup): they run with one parallelism."""

    def __init__(self, job_graph: JobGraph) -> None:
        parent = {v.id: v.id for v in job_graph.vertices}

        def find(vertex_id: str) -> str:
            while parent[vertex_id] != vertex_id:
                parent[vertex_id] = parent[parent[vertex_id]]
                vertex_id = parent[vertex_id]
            return vertex_id

        for e in job_graph.edges:
            if e.partitioner.kind == "forward":
                parent[find(e.source)] = find(e.target)
        self.group_of = {v.id: find(v.id) for v in job_graph.vertices}
        self.members: dict[str, list[str]] = {}
        for v in job_graph.topological_order():
            self.members.setdefault(self.group_of[v.id], []).append(v.id)

    def of(self, vertex_id: str) -> list[str]:
        """The members of ``vertex_id``'s group, in topological order."""
        return self.members[self.group_of[vertex_id]]
