"""Local pre-aggregation before a keyed shuffle in BATCH mode (a map-side combiner).

In BATCH mode a keyed ``reduce``/``sum`` emits one final record per key, so the
result does not depend on how the reduce calls are grouped: PyFlink's contract
for ReduceFunction is an associative merge of two values of one key. Each
producer subtask can therefore reduce its own share per key first and send one
partial value per key over the network instead of every record, as Flink's
batch runtime and Spark do with combiners. For a word count that turns ten
million shuffled records into a few thousand, and splits the reduce work over
the producers. STREAMING jobs are untouched: there every update is output.

Declared output types: in PyFlink the records reach the shuffle through the coder of the
feeding function's declared type (a float declared INT is an int before any reduce call), and
the combiner's partial results are flott's own. So the combiner checks its input as the task's
output would have been checked, and its own output is not checked again.
"""

from __future__ import annotations

import hashlib

import msgspec

from flott.runtime.jobgraph import JobEdge, JobVertex, OperatorDescriptor
from flott.runtime.tasks.record_writer import CHECK_INPUT, UNCHECKED_OUTPUT

COMBINABLE_KINDS = frozenset({"reduce", "sum"})
LOCAL_PRE_AGGREGATION = "local_pre_aggregation"
"""Config flag on the added operator (for plans and tests)."""


def _combiner_id(operator_id: str) -> str:
    return hashlib.md5(f"{operator_id}|local-pre-aggregation".encode(), usedforsecurity=False).hexdigest()


def add_local_pre_aggregation(
    vertices: list[JobVertex], edges: list[JobEdge], runtime_mode: str
) -> list[JobVertex]:
    """``vertices`` with a combiner appended to each producer that feeds a combinable keyed aggregation."""
    if runtime_mode != "BATCH":
        return vertices
    by_id = {v.id: v for v in vertices}
    out_edges: dict[str, list[JobEdge]] = {}
    in_edges: dict[str, list[JobEdge]] = {}
    for e in edges:
        out_edges.setdefault(e.source, []).append(e)
        in_edges.setdefault(e.target, []).append(e)
    replaced: dict[str, JobVertex] = {}
    for e in edges:
        if e.partitioner.kind != "hash":
            continue
        producer, consumer = by_id[e.source], by_id[e.target]
        head = consumer.operators[0]
        if (
            head.kind not in COMBINABLE_KINDS
            or head.key_selector != e.partitioner.key_selector
            or any(k.startswith("timestamped") for k in head.config)
            or len(out_edges[producer.id]) != 1
            or producer.id in replaced
        ):
            continue
        feeder = producer.operators[-1]
        config = {k: v for k, v in head.config.items() if k != CHECK_INPUT}
        config.update({LOCAL_PRE_AGGREGATION: True, UNCHECKED_OUTPUT: True})
        if feeder.kind != "source" and feeder.output_type is not None:
            # PyFlink serialises the records before the shuffle, as fields of key_by's rows: check
            # them where they enter the combiner, not the partial results it sends on.
            config[CHECK_INPUT] = {"type": feeder.output_type, "producer": feeder.name, "keyed": True}
        combiner = OperatorDescriptor(
            operator_id=_combiner_id(head.operator_id),
            name=f"Local {head.name}",
            kind=head.kind,
            function=head.function,
            key_selector=head.key_selector,
            input_type=head.input_type,
            output_type=head.output_type,
            config=config,
        )
        replaced[producer.id] = msgspec.structs.replace(
            producer, name=f"{producer.name} -> {combiner.name}", operators=[*producer.operators, combiner]
        )
    return [replaced.get(v.id, v) for v in vertices]
