"""Done-means of event time on real TaskExecutor processes: windows, late data, timers, two inputs.

Sources hand out records in phases with pauses longer than the watermark
interval, so every record's watermark is known and the expected output is
computed by brute force (``reference.py``), late records included.
"""

from __future__ import annotations

import ast
import time
from pathlib import Path
from typing import Any

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Duration, Encoder, Types, WatermarkStrategy
from flott.common.watermark_strategy import TimestampAssigner
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.file_system import FileSink
from flott.datastream.functions import (
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    ProcessFunction,
    ProcessWindowFunction,
)
from flott.datastream.output_tag import OutputTag
from flott.datastream.state import ListStateDescriptor, ValueStateDescriptor
from flott.datastream.window import (
    EventTimeSessionWindows,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
)
from tests.e2e.conftest import read_output_lines
from tests.windowing.reference import session_windows, sliding_windows
from tests.windowing.sources import PhasedSource
from tests.windowing.test_window_operator import random_phases

OUT_OF_ORDERNESS_MS = 1000
WATERMARK_INTERVAL_MS = 20
PAUSE_S = 0.2


class ByField(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1])


class Contents(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        w = context.window()
        yield key, w.start, w.end, sorted(v for _, _, v in elements)


def event_time_env(parallelism: int = 2) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.get_config().set_auto_watermark_interval(WATERMARK_INTERVAL_MS)
    return env


def with_timestamps(env: StreamExecutionEnvironment, phases: list[list[Any]], at_source: bool = False) -> Any:
    """The phases with timestamps and watermarks from ``from_source`` or from an assigner after it."""
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(OUT_OF_ORDERNESS_MS)
    ).with_timestamp_assigner(ByField())
    if at_source:
        return env.from_source(PhasedSource(phases, PAUSE_S), strategy, "phases")
    return env.from_source(
        PhasedSource(phases, PAUSE_S), WatermarkStrategy.no_watermarks(), "phases"
    ).assign_timestamps_and_watermarks(strategy)


def file_sink(path: Path) -> Any:
    return FileSink.for_row_format(str(path), Encoder.simple_string_encoder()).build()


def read_records(path: Path) -> list[Any]:
    return sorted(ast.literal_eval(line) for line in read_output_lines(path))


def run_windows(
    tmp_path: Path, phases: list[list[Any]], windowed: Any, at_source: bool = False
) -> tuple[list[Any], list[Any]]:
    env = event_time_env()
    late = OutputTag("late")
    keyed = with_timestamps(env, phases, at_source).key_by(lambda r: r[0])
    result = windowed(keyed).side_output_late_data(late).process(Contents())
    result.sink_to(file_sink(tmp_path / "main"))
    result.get_side_output(late).sink_to(file_sink(tmp_path / "late"))
    env.execute("windows")
    main = [(k, s, e, list(vs)) for k, s, e, vs in read_records(tmp_path / "main")]
    return main, read_records(tmp_path / "late")


def contents(key: str, window: tuple[int, int], values: list[int]) -> tuple[str, int, int, list[int]]:
    return key, window[0], window[1], sorted(values)


def test_tumbling_windows_with_lateness_equal_brute_force(tmp_path: Path, embedded: EmbeddedExecutor) -> None:
    phases = random_phases(11, n_phases=8)
    main, late = run_windows(
        tmp_path, phases, lambda k: k.window(TumblingEventTimeWindows.of(1000)).allowed_lateness(700)
    )
    expected_main, expected_late = sliding_windows(phases, OUT_OF_ORDERNESS_MS, 1000, 1000, 700, contents)
    assert late == sorted(expected_late) and late, "late records went to the side output"
    assert main == expected_main


def test_sliding_windows_equal_brute_force(tmp_path: Path, embedded: EmbeddedExecutor) -> None:
    phases = random_phases(16, n_phases=8)
    main, late = run_windows(tmp_path, phases, lambda k: k.window(SlidingEventTimeWindows.of(2000, 500)))
    expected_main, expected_late = sliding_windows(phases, OUT_OF_ORDERNESS_MS, 2000, 500, 0, contents)
    assert late == sorted(expected_late) and late
    assert main == expected_main


def test_session_windows_with_watermarks_from_the_source_equal_brute_force(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    phases = random_phases(15, n_phases=8, disorder=2500)
    main, late = run_windows(
        tmp_path, phases, lambda k: k.window(EventTimeSessionWindows.with_gap(600)), at_source=True
    )
    expected_main, expected_late = session_windows(phases, OUT_OF_ORDERNESS_MS, 600, contents)
    assert late == sorted(expected_late) and late
    assert main == expected_main


class EventTimers(KeyedProcessFunction):
    """Per element: a timer 500 ms after it (registered twice: timers are deduplicated)."""

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        for _ in range(2):
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + 500)
        return None

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
        yield (
            ctx.get_current_key(),
            timestamp,
            ctx.timer_service().current_watermark(),
            ctx.time_domain().name,
        )


def test_event_time_timers_fire_in_order_per_key_once_the_watermark_passes(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    # Disorder below out-of-orderness + 500: no timer is registered behind the watermark (such a
    # timer would fire at the next watermark, after later ones: correct, but not in order).
    phases = random_phases(14, n_phases=6, disorder=800)
    env = event_time_env()
    with_timestamps(env, phases).key_by(lambda r: r[0]).process(EventTimers()).sink_to(
        file_sink(tmp_path / "out")
    )
    env.execute("timers")
    lines = read_output_lines(tmp_path / "out")  # one part file per subtask, in the order written
    fired = [ast.literal_eval(line) for line in lines]
    expected = sorted({(k, ts + 500) for phase in phases for k, ts, _ in phase})
    assert sorted((k, t) for k, t, _, _ in fired) == expected, "each distinct timer fires exactly once"
    for key in {k for k, _, _, _ in fired}:
        times = [t for k, t, _, _ in fired if k == key]
        assert times == sorted(times), f"timers of key {key} fired out of order"
    assert all(wm >= t and domain == "EVENT_TIME" for _, t, wm, domain in fired)


class ProcessingTimers(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        due = ctx.timer_service().current_processing_time() + 150
        ctx.timer_service().register_processing_time_timer(due)
        return None

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
        yield (
            ctx.get_current_key(),
            timestamp,
            ctx.timer_service().current_processing_time(),
            ctx.time_domain().name,
        )


def test_processing_time_timers_fire_on_the_wall_clock(tmp_path: Path, embedded: EmbeddedExecutor) -> None:
    # The source outlives the timers: processing-time timers still pending at the end do not fire.
    phases = [[("a", 1, 1), ("b", 2, 2)], [("a", 3, 3)], [("c", 4, 4)], []]
    env = event_time_env()
    started = time.time() * 1000
    source = PhasedSource(phases, pause_s=0.4, initial_delay_s=1.0)
    env.from_source(source, WatermarkStrategy.no_watermarks(), "phases").key_by(lambda r: r[0]).process(
        ProcessingTimers()
    ).sink_to(file_sink(tmp_path / "out"))
    env.execute("processing_timers")
    fired = read_records(tmp_path / "out")
    assert {k for k, _, _, _ in fired} == {"a", "b", "c"}
    assert len({(k, due) for k, due, _, _ in fired}) == len(fired), "each timer fires once"
    for _, due, at, domain in fired:
        assert domain == "PROCESSING_TIME"
        assert started < due <= at < due + 2000, "fired on the wall clock, at or soon after the due time"


class JoinOrders(KeyedCoProcessFunction):
    """Input 1: customers (id, name); input 2: orders (id, customer id, amount). Emits enriched orders."""

    def open(self, runtime_context: Any) -> None:
        self.name = runtime_context.get_state(ValueStateDescriptor("name", Types.STRING()))
        self.pending = runtime_context.get_list_state(
            ListStateDescriptor("pending", Types.PICKLED_BYTE_ARRAY())
        )

    def process_element1(self, value: Any, ctx: Any) -> Any:
        self.name.update(value[1])
        for order in self.pending.get():
            yield order[0], value[1], order[2]
        self.pending.clear()

    def process_element2(self, value: Any, ctx: Any) -> Any:
        name = self.name.value()
        if name is None:
            self.pending.add(value)
        else:
            yield value[0], name, value[2]


@pytest.mark.parametrize("parallelism", [1, 3])
def test_two_input_operator_joins_two_keyed_streams(
    tmp_path: Path, embedded: EmbeddedExecutor, parallelism: int
) -> None:
    customers = [(f"c{i}", f"name{i}") for i in range(40)]
    orders = [(f"o{i}", f"c{(i * 7) % 40}", i * 10) for i in range(300)]
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    left = env.from_collection(customers)
    right = env.from_collection(orders)
    (
        left.connect(right)
        .key_by(lambda c: c[0], lambda o: o[1])
        .process(JoinOrders())
        .sink_to(file_sink(tmp_path / "out"))
    )
    env.execute("join")
    names = dict(customers)
    assert read_records(tmp_path / "out") == sorted((o, names[c], amount) for o, c, amount in orders)


ODD = OutputTag("odd", Types.INT())
BIG = OutputTag("big", Types.INT())


class SplitNumbers(ProcessFunction):
    """Even numbers to the main output, odd ones to a side output (yield), big ones via ctx.output."""

    def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Any:
        if value >= 90:
            ctx.output(BIG, value)
        if value % 2:
            yield ODD, value
        else:
            yield value


def test_side_outputs_of_a_process_function_reach_their_consumers(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    split = env.from_collection(list(range(100))).rebalance().process(SplitNumbers(), output_type=Types.INT())
    split.sink_to(file_sink(tmp_path / "even"))
    split.get_side_output(ODD).map(lambda v: -v, output_type=Types.INT()).sink_to(file_sink(tmp_path / "odd"))
    split.get_side_output(BIG).sink_to(file_sink(tmp_path / "big"))
    env.execute("side_outputs")
    assert read_records(tmp_path / "even") == list(range(0, 100, 2))
    assert read_records(tmp_path / "odd") == sorted(-v for v in range(1, 100, 2))
    assert read_records(tmp_path / "big") == list(range(90, 100))
