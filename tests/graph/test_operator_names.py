"""Operator names and descriptions as PyFlink 2.3 builds them (taken from its execution plan).

The expected strings are what the real PyFlink's ``env.get_execution_plan()`` shows for
the same calls: no Python reprs, windows named after their assigner and described as
``Window(assigner, trigger, functions)``.
"""

from __future__ import annotations

import json
import warnings

from flott.common import Time, Types
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.functions import KeyedProcessFunction, ProcessFunction, ProcessWindowFunction
from flott.datastream.window import SlidingEventTimeWindows, TumblingProcessingTimeWindows
from flott.graph import MissingUidWarning


class W(ProcessWindowFunction):
    def process(self, key, context, elements):  # type: ignore[no-untyped-def]
        yield key


class P(ProcessFunction):
    def process_element(self, value, ctx):  # type: ignore[no-untyped-def]
        yield value


class KP(KeyedProcessFunction):
    def process_element(self, value, ctx):  # type: ignore[no-untyped-def]
        yield value


def test_plan_names_and_descriptions_match_pyflink() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    pairs = env.from_collection([("a", 1)], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    keyed = pairs.key_by(lambda x: x[0])
    keyed.reduce(lambda a, b: a).print()
    keyed.sum(1).print()
    keyed.count_window(3).reduce(lambda a, b: a).print()
    keyed.window(TumblingProcessingTimeWindows.of(Time.seconds(5))).process(W()).print()
    keyed.window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5))).reduce(
        lambda a, b: a, window_function=W()
    ).print()
    pairs.window_all(TumblingProcessingTimeWindows.of(Time.seconds(5))).reduce(lambda a, b: a).print()
    pairs.filter(lambda x: True).flat_map(lambda x: [x]).process(P()).print()
    keyed.process(KP()).print()
    plan = json.loads(env.get_execution_plan())
    nodes = {(n["type"], n["contents"]) for n in plan["nodes"]}
    assert {
        ("Source: Collection Source", "Source: Collection Source"),
        ("Reduce", "Reduce"),
        ("CountTumblingWindowAssigner", "Window(CountTumblingWindowAssigner(3), CountTrigger, function)"),
        (
            "TumblingProcessingTimeWindows",
            "Window(TumblingProcessingTimeWindows(5000, 0), ProcessingTimeTrigger, W)",
        ),
        (
            "SlidingEventTimeWindows",
            "Window(SlidingEventTimeWindows(10000, 5000, 0), EventTimeTrigger, function, W)",
        ),
        (
            "TumblingProcessingTimeWindows",
            "AllWindow(TumblingProcessingTimeWindows(5000, 0), ProcessingTimeTrigger, function)",
        ),
        ("Filter", "Filter"),
        ("FlatMap", "FlatMap"),
        ("PROCESS", "PROCESS"),
        ("KEYED PROCESS", "KEYED PROCESS"),
        ("Sink: Print to Std. Out", "Sink: Print to Std. Out"),
    } <= nodes
    assert not [c for _, c in nodes if " object at 0x" in c or "<lambda>" in c]


def test_vertex_names_chain_the_operator_names() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(["a b"]).flat_map(lambda s: s.split()).map(lambda w: (w, 1)).key_by(
        lambda t: t[0]
    ).reduce(lambda a, b: (a[0], a[1] + b[1])).print()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingUidWarning)
        names = [v.name for v in env.get_job_graph().vertices]
    assert names == ["Source: Collection Source -> FlatMap -> Map", "Reduce -> Sink: Print to Std. Out"]
