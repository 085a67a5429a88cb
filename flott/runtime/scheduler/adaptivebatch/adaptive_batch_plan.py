"""The parallelism decisions of one BATCH job run by the adaptive batch scheduler (pure state).

The ExecutionGraph owns one :class:`AdaptiveBatchPlan`. At the start it knows the parallelism
of every vertex that was configured (and of the forward groups holding one) and of the sources;
every other vertex's parallelism is -1 (as Flink's REST API shows it) until
:meth:`AdaptiveBatchPlan.decide` is called for it, once all its producers finished.
:attr:`AdaptiveBatchPlan.job_graph` is the job as it runs now: the submitted JobGraph with the
decided parallelism (or -1) and the effective max parallelism of each vertex.

How many subpartitions a producer writes for an edge depends only on what was known when the
job started, never on timing: one for a forward edge; the consumer's parallelism when that was
known from the start (a *static* consumer, read as in a pipelined job: subtask ``i`` reads
subpartition ``i``); else the consumer's max parallelism, of which each consumer subtask reads
a contiguous range (:func:`consumed_subpartitions`).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from flott.runtime.jobgraph import JobEdge, JobGraph
from flott.runtime.scheduler.adaptivebatch.vertex_parallelism_decider import (
    AdaptiveBatchSettings,
    ConsumedResult,
    ForwardGroups,
    consumed_subpartitions,
    decide_parallelism,
)

__all__ = ["AdaptiveBatchPlan"]


class AdaptiveBatchPlan:
    """Decided and pending parallelism of a job's vertices; see the module docstring."""

    def __init__(self, job_graph: JobGraph, settings: AdaptiveBatchSettings) -> None:
        self.settings = settings
        self.submitted = job_graph
        self.groups = ForwardGroups(job_graph)
        vertices = {v.id: v for v in job_graph.vertices}
        self._inputs: dict[str, list[JobEdge]] = {v.id: [] for v in job_graph.vertices}
        for e in job_graph.edges:
            self._inputs[e.target].append(e)
        fixed: dict[str, int] = {}
        for group, members in self.groups.members.items():
            configured = [vertices[m].parallelism for m in members if vertices[m].parallelism_configured]
            if configured:
                fixed[group] = max(configured)
        self.max_parallelism: dict[str, int] = {}
        for v in job_graph.vertices:
            group_p = fixed.get(self.groups.group_of[v.id], 0)
            if v.max_parallelism_configured or v.parallelism_configured:
                self.max_parallelism[v.id] = v.max_parallelism
            elif settings.max_parallelism >= group_p:
                self.max_parallelism[v.id] = settings.max_parallelism
            else:
                self.max_parallelism[v.id] = v.max_parallelism
        self.parallelism: dict[str, int] = dict.fromkeys(vertices, -1)
        for group, members in self.groups.members.items():
            if group in fixed:
                self._set_group(members[0], fixed[group])
            elif not self._inputs[members[0]]:  # the group's first vertex is a source
                self._set_group(members[0], decide_parallelism(settings, [], self._group_max(members[0])))
        self.static = frozenset(vid for vid, p in self.parallelism.items() if p > 0)
        """Vertices whose parallelism was known before anything ran."""
        self.job_graph = self._effective_graph()

    # -- decisions ------------------------------------------------------------------------

    def is_decided(self, vertex_id: str) -> bool:
        return self.parallelism[vertex_id] > 0

    def inputs_of(self, vertex_id: str) -> list[JobEdge]:
        return self._inputs[vertex_id]

    def decide(self, vertex_id: str, consumed: Sequence[ConsumedResult]) -> list[str]:
        """Decide ``vertex_id``'s forward group from what ``vertex_id`` consumes; the vertices decided."""
        if self.is_decided(vertex_id):
            return []
        parallelism = decide_parallelism(self.settings, consumed, self._group_max(vertex_id))
        decided = self._set_group(vertex_id, parallelism)
        self.job_graph = self._effective_graph()
        return decided

    def _group_max(self, vertex_id: str) -> int:
        return min(self.max_parallelism[m] for m in self.groups.of(vertex_id))

    def _set_group(self, vertex_id: str, parallelism: int) -> list[str]:
        decided = []
        for member in self.groups.of(vertex_id):
            if self.parallelism[member] <= 0:
                self.parallelism[member] = parallelism
                self.max_parallelism[member] = max(self.max_parallelism[member], parallelism)
                decided.append(member)
        return decided

    def upper_bound(self, vertex_id: str) -> int:
        """The most subtasks ``vertex_id`` will run (its parallelism once decided)."""
        p = self.parallelism[vertex_id]
        return p if p > 0 else min(self.settings.max_parallelism, self._group_max(vertex_id))

    # -- data layout ----------------------------------------------------------------------

    def num_subpartitions(self, edge: JobEdge) -> int:
        """Subpartitions each producer subtask writes for ``edge`` (see the module docstring)."""
        if edge.partitioner.kind == "forward":
            return 1
        if edge.target in self.static:
            return self.parallelism[edge.target]
        return self.max_parallelism[edge.target]

    def input_subpartitions(self, edge: JobEdge, consumer_index: int) -> range:
        """The subpartitions of each producer of ``edge`` that consumer subtask ``consumer_index`` reads."""
        if edge.partitioner.kind == "forward":
            return range(0, 1)
        if edge.target in self.static:
            return range(consumer_index, consumer_index + 1)
        return consumed_subpartitions(
            self.num_subpartitions(edge),
            self.parallelism[edge.target],
            consumer_index,
            broadcast=edge.partitioner.kind == "broadcast",
        )

    def _effective_graph(self) -> JobGraph:
        vertices = [
            msgspec.structs.replace(
                v, parallelism=self.parallelism[v.id], max_parallelism=self.max_parallelism[v.id]
            )
            for v in self.submitted.vertices
        ]
        return msgspec.structs.replace(self.submitted, vertices=vertices)
