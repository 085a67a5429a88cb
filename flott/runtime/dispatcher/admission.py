"""Admission control: what the Dispatcher refuses before it builds anything for a job.

A JobGraph is a few kilobytes of data, but what it asks for is not: one vertex at
parallelism 10^7 makes the JobMaster build 10^7 subtasks (gigabytes, minutes of
CPU on the event loop that serves REST and heartbeats), 2,000 vertices put 2,000
tasks (threads) into one slot, and a job needing more slots than a cluster that
cannot start TaskExecutors will ever have waits ``slot.request.timeout`` and
blocks nothing useful. So every submission and every rescale is checked first,
with plain arithmetic on the graph (no subtask is built), and refused with a
:class:`~flott.errors.JobAdmissionError` (HTTP 400) naming the limit and its key.

The limits and their keys:

=============================================  =======  ======  =================================
key                                            default  whose   bounds
=============================================  =======  ======  =================================
(none: Flink's hard bound)                     32768    Flink   a vertex's max parallelism
``flott.admission.max-subtasks``               10000    flott   subtasks of all running jobs,
                                                                this one included
``flott.admission.max-vertices``               1000     flott   vertices (tasks) of one job
``flott.admission.max-edges``                  10000    flott   edges of one job
``flott.admission.refuse-unschedulable``       true     flott   refuse a job needing more slots
                                                                than a cluster that cannot grow
                                                                has (false: wait, as Flink does)
``rest.server.max-content-length``             100 MiB  Flink   bytes of a submission (REST)
=============================================  =======  ======  =================================

A cluster *can grow* when its ResourceManager starts TaskExecutors on demand
(application mode); a session cluster, standalone or with a fixed number of
local TaskExecutors, cannot: its capacity is the slots of the TaskExecutors that
are registered or being started by the cluster itself (the session cluster's and
the HA cluster's local ones, and so the HA application cluster's: a job its
program submits before the last of them registered is judged against them).
Recovered jobs (HA) are not re-checked: they were admitted once and their slots
may simply not be back yet.
"""

from __future__ import annotations

from dataclasses import dataclass

from flott.configuration import Configuration
from flott.errors import ConfigurationError, JobAdmissionError
from flott.runtime.gateways.resource_manager_gateway import SlotCapacity
from flott.runtime.jobgraph import JobGraph

UPPER_BOUND_MAX_PARALLELISM = 32768
"""Flink's KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM (1 << 15)."""

MAX_SUBTASKS_KEY = "flott.admission.max-subtasks"
MAX_VERTICES_KEY = "flott.admission.max-vertices"
MAX_EDGES_KEY = "flott.admission.max-edges"
REFUSE_UNSCHEDULABLE_KEY = "flott.admission.refuse-unschedulable"


@dataclass(frozen=True)
class AdmissionLimits:
    max_subtasks: int
    max_vertices: int
    max_edges: int
    refuse_unschedulable: bool

    @classmethod
    def from_config(cls, config: Configuration) -> AdmissionLimits:
        limits = cls(
            max_subtasks=config.get_int(MAX_SUBTASKS_KEY),
            max_vertices=config.get_int(MAX_VERTICES_KEY),
            max_edges=config.get_int(MAX_EDGES_KEY),
            refuse_unschedulable=config.get_bool(REFUSE_UNSCHEDULABLE_KEY),
        )
        for key, value in (
            (MAX_SUBTASKS_KEY, limits.max_subtasks),
            (MAX_VERTICES_KEY, limits.max_vertices),
            (MAX_EDGES_KEY, limits.max_edges),
        ):
            if value < 1:
                raise ConfigurationError(f"{key}: must be at least 1, got {value}")
        return limits


def subtasks_of(graph: JobGraph) -> int:
    return sum(v.parallelism for v in graph.vertices)


def check_graph_size(graph: JobGraph, limits: AdmissionLimits) -> None:
    """Bounds that need nothing but the graph: vertex and edge counts, parallelism bounds.

    Runs before :meth:`JobGraph.validate` (whose cost grows with the graph), so it touches
    every vertex once and nothing else.
    """
    if len(graph.vertices) > limits.max_vertices:
        raise JobAdmissionError(
            f"job {graph.job_id} has {len(graph.vertices)} vertices; this cluster accepts at most "
            f"{limits.max_vertices} ({MAX_VERTICES_KEY})"
        )
    if len(graph.edges) > limits.max_edges:
        raise JobAdmissionError(
            f"job {graph.job_id} has {len(graph.edges)} edges; this cluster accepts at most "
            f"{limits.max_edges} ({MAX_EDGES_KEY})"
        )
    for v in graph.vertices:
        if not 1 <= v.max_parallelism <= UPPER_BOUND_MAX_PARALLELISM:
            raise JobAdmissionError(
                f"vertex '{v.name}' has max parallelism {v.max_parallelism}; it must be between 1 and "
                f"{UPPER_BOUND_MAX_PARALLELISM} (Flink's upper bound)"
            )
        if not 1 <= v.parallelism <= v.max_parallelism:
            raise JobAdmissionError(
                f"vertex '{v.name}' has parallelism {v.parallelism}; it must be between 1 and its max "
                f"parallelism {v.max_parallelism}"
            )


def check_cluster_limits(
    graph: JobGraph,
    limits: AdmissionLimits,
    running_subtasks: int,
    capacity: SlotCapacity,
    slots_released: int | None = None,
) -> None:
    """Bounds that depend on the cluster: total subtasks, and slots a fixed-size cluster has.

    ``running_subtasks``: subtasks of the jobs running now, without this one (for a rescale: the
    job's current subtasks are already subtracted); ``slots_released``: slots this job holds now
    and gives back before it needs the new ones (a rescale), counted as available; None for a
    submission, which is refused only if it needs more slots than the cluster has at all.
    """
    subtasks = subtasks_of(graph)
    if running_subtasks + subtasks > limits.max_subtasks:
        raise JobAdmissionError(
            f"job {graph.job_id} needs {subtasks} subtasks and {running_subtasks} are running; this "
            f"cluster runs at most {limits.max_subtasks} ({MAX_SUBTASKS_KEY})"
        )
    if capacity.can_grow or not limits.refuse_unschedulable:
        return
    needed = graph.slots_needed()
    if slots_released is not None:
        available = capacity.free_slots + slots_released
        if needed > available:
            raise JobAdmissionError(
                f"job {graph.job_id} would need {needed} task slots at the new parallelism and only "
                f"{available} are available (this cluster has {capacity.total_slots} and does not start "
                "TaskManagers on demand)"
            )
        return
    # A standalone cluster whose TaskManagers have not registered yet is still starting (its
    # operator starts them in any order, as with Flink): the job waits for slots, as in Flink.
    # TaskExecutors the cluster started itself and that have not registered yet count with their
    # slots (total_slots has them): the cluster will have them, so a job submitted while they come
    # up (application mode submits at once) is judged against them, not refused.
    if capacity.task_executors > 0 and needed > capacity.total_slots:
        starting = capacity.task_executors_starting
        them = f", {starting} of them starting" if starting else ""
        raise JobAdmissionError(
            f"job {graph.job_id} needs {needed} task slots but this cluster has {capacity.total_slots} "
            f"({capacity.task_executors + starting} TaskManager(s){them}) and does not start "
            "TaskManagers on demand, so "
            f"the job could never run; lower its parallelism, add TaskManagers first, or set "
            f"{REFUSE_UNSCHEDULABLE_KEY}: false to let it wait for slots"
        )


def check_rescale(graph: JobGraph, parallelism: int) -> None:
    """A rescale request's own bounds, before anything of the job is touched."""
    top = max((v.max_parallelism for v in graph.vertices), default=1)
    if not 1 <= parallelism <= top:
        raise JobAdmissionError(
            f"cannot rescale job {graph.job_id} to parallelism {parallelism}: it must be between 1 and "
            f"the job's max parallelism {top}"
        )
