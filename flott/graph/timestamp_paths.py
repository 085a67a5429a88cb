"""Which records carry event timestamps: decided once per job, per StreamGraph node.

Flink attaches a timestamp slot to every record. flott only pays for
timestamps where they can matter: records are ``(value, timestamp)`` pairs
from a point that creates timestamps (a source with a timestamp assigner, an
``assign_timestamps_and_watermarks`` operator, a window operator) down to the
sinks; everything else (a word count, say) moves bare values.

Rules:

* a node's input ``i`` is timestamped if any edge into it carries timestamped
  records;
* sources emit timestamps if their WatermarkStrategy has a timestamp assigner, or makes
  watermarks and the source's records carry timestamps (``supplies_record_timestamps``: Kafka),
  timestamp/watermark and window operators always do, sinks emit nothing, and
  every other operator keeps its input's timestamps (it emits pairs iff an input
  has them);
* all edges into one input agree: if one producer of an input is timestamped,
  the others are made so too (a plain source then emits ``(value, None)``,
  a plain operator gets timestamped inputs itself, up to its sources).

The last rule only ever turns flags on, so iterating to a fixpoint ends.
"""

from __future__ import annotations

from flott.graph.stream_graph import StreamGraph, StreamNode

TIMESTAMPING_KINDS = frozenset({"timestamps_watermarks", "window"})
"""Operators whose outputs always carry timestamps (the assigned ones, a window's end)."""


def _creates_timestamps(node: StreamNode) -> bool:
    if node.kind in TIMESTAMPING_KINDS:
        return True
    if node.is_source:
        strategy = node.watermark_strategy
        if strategy is None:
            return False
        if getattr(strategy, "timestamp_assigner", None) is not None:
            return True
        # A source whose records carry their own timestamps (Kafka's), under a strategy that makes
        # watermarks from them (Flink uses the record's timestamp when there is no assigner).
        return getattr(node.function, "supplies_record_timestamps", False) is True and (
            getattr(strategy, "kind", "NO_WATERMARKS") != "NO_WATERMARKS"
        )
    return False


def _keeps_timestamps(node: StreamNode) -> bool:
    return not node.is_source and not node.is_sink and node.kind not in TIMESTAMPING_KINDS


def assign_timestamp_paths(graph: StreamGraph) -> None:
    """Set ``timestamped_inputs`` and ``timestamped_output`` of every node of ``graph``."""
    order = graph.topological_order()
    forced_out: set[int] = set()
    forced_in: set[int] = set()
    changed = True
    while changed:
        changed = False
        for node in order:
            inputs = [node.id in forced_in, node.id in forced_in]
            for edge in node.in_edges:
                if graph.node(edge.source_id).timestamped_output:
                    inputs[edge.type_number] = True
            node.timestamped_inputs = inputs
            node.timestamped_output = (
                _creates_timestamps(node)
                or (_keeps_timestamps(node) and any(inputs))
                or node.id in forced_out
            )
        for node in order:
            for edge in node.in_edges:
                if not node.timestamped_inputs[edge.type_number]:
                    continue
                producer = graph.node(edge.source_id)
                if producer.timestamped_output:
                    continue
                changed = True
                if _keeps_timestamps(producer):
                    forced_in.add(producer.id)
                else:
                    forced_out.add(producer.id)
