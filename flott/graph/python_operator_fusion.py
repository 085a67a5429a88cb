"""Where PyFlink hands a Python operator's results to Java (PyFlink's Python operator fusion).

PyFlink runs consecutive Python functions in one Python operator when its
PythonOperatorChainingOptimizer fuses them: the consumer is a non-keyed one-input
process operator (``map``, ``flat_map``, ``filter``, ``process``), its producer a
Python process operator of any kind (keyed or not, one or two inputs, windows and
keyed aggregations included), joined by a forward exchange of the producer's main
output, with one consumer, the same parallelism, max parallelism and slot sharing
group, and chaining strategies that allow it. Inside such a fused operator values
pass untouched; everywhere else they leave Python through the coder of the
producer's declared ``output_type`` (see :mod:`flott.common.type_conversion`).

The rule is PyFlink's ``python.operator-chaining.enabled`` (default true), not Java's
operator chaining: ``env.disable_operator_chaining()`` splits flott's tasks but fuses
the same Python functions in PyFlink, so a declared output type is checked where the
fusion ends, not at every task boundary. Watermark assigners and async I/O are Python
operators PyFlink never fuses, sources and sinks are Java.
"""

from __future__ import annotations

from flott.api.streaming.transformations import ChainingStrategy
from flott.errors import ConfigurationError
from flott.graph.stream_graph import StreamEdge, StreamGraph
from flott.runtime.operators.keyed_operators import AGGREGATION_KINDS

PYTHON_OPERATOR_CHAINING = "python.operator-chaining.enabled"

FUSED_CONSUMER_KINDS = frozenset({"map", "flat_map", "filter", "process"})
"""Non-keyed one-input Python process operators: what PyFlink fuses into its producer."""

FUSED_PRODUCER_KINDS = FUSED_CONSUMER_KINDS | frozenset(
    {"keyed_process", "reduce", "window", "co_map", "co_flat_map", "co_process", "keyed_co_process"}
    | set(AGGREGATION_KINDS)
)
"""Python process operators (keyed or not, one or two inputs) a consumer can be fused into."""


def python_fusion_enabled(config: dict[str, str]) -> bool:
    """PyFlink's ``python.operator-chaining.enabled`` (true unless set to false)."""
    raw = str(config.get(PYTHON_OPERATOR_CHAINING, "true")).strip().lower()
    if raw not in ("true", "false"):

        raise ConfigurationError(
            f"Could not parse value '{config[PYTHON_OPERATOR_CHAINING]}' for key "
            f"'{PYTHON_OPERATOR_CHAINING}' (expected true or false)"
        )
    return raw == "true"


def pyflink_fuses(edge: StreamEdge, graph: StreamGraph) -> bool:
    """Whether PyFlink runs ``edge``'s consumer in the same Python operator as its producer, so
    the producer's results reach it without going through the declared output type."""
    up = graph.node(edge.source_id)
    down = graph.node(edge.target_id)
    return (
        up.kind in FUSED_PRODUCER_KINDS
        and down.kind in FUSED_CONSUMER_KINDS
        and down.key_selector is None
        and edge.partitioner == "forward"
        and edge.output_tag is None
        and len(up.out_edges) == 1
        and len(down.in_edges) == 1
        and up.parallelism == down.parallelism
        and up.max_parallelism == down.max_parallelism
        and up.slot_sharing_group == down.slot_sharing_group
        and up.chaining_strategy != ChainingStrategy.NEVER
        and down.chaining_strategy == ChainingStrategy.ALWAYS
        and python_fusion_enabled(graph.config)
    )
