"""The window operator driven by hand (no task, no network): results equal brute-force references.

Inputs arrive in phases: a phase's records, then the watermark of a bounded
out-of-orderness strategy. ``reference.py`` computes what must come out,
independently of the operator's code.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from flott.datastream.functions import AggregateFunction, ProcessWindowFunction, WindowFunction
from flott.datastream.output_tag import OutputTag
from flott.datastream.state import ValueStateDescriptor
from flott.datastream.window import (
    ContinuousEventTimeTrigger,
    CountSlidingWindowAssigner,
    CountTrigger,
    CountTumblingWindowAssigner,
    DynamicEventTimeSessionWindows,
    EventTimeSessionWindows,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    PurgingTrigger,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from flott.runtime.operators.specs import WindowOperatorSpec
from flott.runtime.operators.stream_operator import SIDE_OUTPUT_TAGS
from flott.runtime.operators.watermark import LONG_MAX
from tests.windowing.harness import Clock, OperatorHarness
from tests.windowing.reference import Record, session_windows, sliding_windows, watermarks

LATE = OutputTag("late")


class Contents(ProcessWindowFunction):
    """(key, start, end, sorted values) per firing."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        w = context.window()
        yield key, w.start, w.end, sorted(v for _, v in elements)


def harness(spec: WindowOperatorSpec, **kwargs: Any) -> OperatorHarness:
    return OperatorHarness(
        "window", spec, key=lambda v: v[0], config={SIDE_OUTPUT_TAGS: [LATE.tag_id]}, **kwargs
    )


def run_phases(
    h: OperatorHarness, phases: list[list[Record]], out_of_orderness: int
) -> tuple[list[Any], list[Record]]:
    """Feed phases and watermarks; returns (sorted main outputs, sorted late records)."""
    for _, phase, after in watermarks(phases, out_of_orderness):
        h.process(*[((key, value), ts) for key, ts, value in phase])
        h.watermark(after)
    main, late = [], []
    for value, ts in h.emitted:
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], OutputTag):
            (key, v) = value[1]
            late.append((key, ts, v))
        else:
            main.append(value)
    return sorted(main), sorted(late)


def random_phases(
    seed: int, n_phases: int = 12, per_phase: int = 25, disorder: int = 4000
) -> list[list[Record]]:
    rng = random.Random(seed)
    phases, clock, value = [], 0, 0
    for _ in range(n_phases):
        phase = []
        for _ in range(per_phase):
            clock += rng.randint(0, 300)
            value += 1
            phase.append((rng.choice("abcd"), max(0, clock - rng.randint(0, disorder)), value))
        phases.append(phase)
    return phases


@pytest.mark.parametrize("fast_path", [True, False], ids=["inline", "generic"])
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("lateness", [0, 1500])
def test_tumbling_windows_equal_brute_force_including_late_data(
    seed: int, lateness: int, fast_path: bool
) -> None:
    phases = random_phases(seed)
    spec = WindowOperatorSpec(
        TumblingEventTimeWindows.of(1000),
        allowed_lateness_ms=lateness,
        late_data_tag=LATE,
        function_kind="process",
        window_function=Contents(),
    )
    h = harness(spec)
    assert h.operator.fast_path  # type: ignore[attr-defined]
    h.operator.fast_path = fast_path  # type: ignore[attr-defined]
    got = run_phases(h, phases, 1000)
    expected = sliding_windows(
        phases, 1000, 1000, 1000, lateness, lambda k, w, vs: (k, w[0], w[1], sorted(vs))
    )
    assert got == expected
    assert expected[1], "the input has late records"


@pytest.mark.parametrize("fast_path", [True, False], ids=["inline", "generic"])
@pytest.mark.parametrize("seed", range(5))
def test_sliding_windows_equal_brute_force(seed: int, fast_path: bool) -> None:
    phases = random_phases(seed)
    spec = WindowOperatorSpec(
        SlidingEventTimeWindows.of(3000, 1000),
        allowed_lateness_ms=500,
        late_data_tag=LATE,
        function_kind="process",
        window_function=Contents(),
    )
    h = harness(spec)
    h.operator.fast_path = fast_path  # type: ignore[attr-defined]
    got = run_phases(h, phases, 1500)
    expected = sliding_windows(phases, 1500, 3000, 1000, 500, lambda k, w, vs: (k, w[0], w[1], sorted(vs)))
    assert got == expected


@pytest.mark.parametrize("seed", range(5))
def test_session_windows_equal_brute_force(seed: int) -> None:
    phases = random_phases(seed, disorder=2500)
    spec = WindowOperatorSpec(
        EventTimeSessionWindows.with_gap(700),
        late_data_tag=LATE,
        function_kind="process",
        window_function=Contents(),
    )
    got = run_phases(harness(spec), phases, 1000)
    expected = session_windows(phases, 1000, 700, lambda k, w, vs: (k, w[0], w[1], sorted(vs)))
    assert got == expected


class SumValues(AggregateFunction):
    def create_accumulator(self) -> Any:
        return 0

    def add(self, value: Any, accumulator: Any) -> Any:
        return accumulator + value[1]

    def get_result(self, accumulator: Any) -> Any:
        return accumulator

    def merge(self, a: Any, b: Any) -> Any:
        return a + b


def test_reduce_and_aggregate_are_incremental_with_optional_window_functions() -> None:
    class Label(WindowFunction):
        def apply(self, key: Any, window: Any, inputs: Any) -> Any:
            return [(key, window.start, list(inputs))]

    records = [(("a", 1), 10), (("a", 2), 20), (("b", 5), 30), (("a", 4), 1200)]
    assigner = TumblingEventTimeWindows.of(1000)
    plain = harness(
        WindowOperatorSpec(assigner, function_kind="reduce", reduce_function=lambda x, y: (x[0], x[1] + y[1]))
    )
    plain.process(*records)
    assert sorted(plain.watermark(LONG_MAX)) == [(("a", 3), 999), (("a", 4), 1999), (("b", 5), 999)]
    agg = harness(
        WindowOperatorSpec(
            assigner, function_kind="aggregate", aggregate_function=SumValues(), window_function=Label()
        )
    )
    agg.process(*records)
    assert sorted(agg.watermark(LONG_MAX)) == [
        (("a", 0, [3]), 999),
        (("a", 1000, [4]), 1999),
        (("b", 0, [5]), 999),
    ]
    proc = harness(
        WindowOperatorSpec(
            assigner,
            function_kind="reduce",
            reduce_function=lambda x, y: (x[0], x[1] + y[1]),
            window_function=Contents(),
        )
    )
    proc.process(*records)
    assert sorted(v for v, _ in proc.watermark(LONG_MAX)) == [
        ("a", 0, 1000, [3]),
        ("a", 1000, 2000, [4]),
        ("b", 0, 1000, [5]),
    ]


def test_results_carry_the_window_end_as_timestamp_and_fire_only_when_the_watermark_passes() -> None:
    h = harness(
        WindowOperatorSpec(
            TumblingEventTimeWindows.of(100), function_kind="process", window_function=Contents()
        )
    )
    h.process((("k", 1), 5), (("k", 2), 150))
    assert h.watermark(98) == []
    assert h.watermark(99) == [(("k", 0, 100, [1]), 99)]
    assert h.watermark(500) == [(("k", 100, 200, [2]), 199)]
    assert h.operator.backend.num_keys("window-contents") == 0, "fired windows are cleaned up"
    assert len(h.operator.timers.event_time_timers) == 0


def test_late_records_without_a_side_output_are_dropped_and_counted() -> None:
    h = OperatorHarness(
        "window",
        WindowOperatorSpec(
            TumblingEventTimeWindows.of(100), function_kind="process", window_function=Contents()
        ),
        key=lambda v: v[0],
    )
    h.watermark(1000)
    assert h.process((("k", 1), 5)) == []
    assert h.operator.num_late_records_dropped == 1  # type: ignore[attr-defined]


def test_dynamic_session_gap_comes_from_the_element() -> None:
    spec = WindowOperatorSpec(
        DynamicEventTimeSessionWindows.with_dynamic_gap(lambda value: value[1]),
        function_kind="process",
        window_function=Contents(),
    )
    h = harness(spec)
    h.process((("k", 20), 0), (("k", 100), 15), (("k", 1), 300), (("k", 15), 290))
    assert sorted(v for v, _ in h.watermark(LONG_MAX)) == [("k", 0, 115, [20, 100]), ("k", 290, 305, [1, 15])]


def test_count_windows_tumbling_and_sliding() -> None:
    tumbling = harness(
        WindowOperatorSpec(
            CountTumblingWindowAssigner.of(3),
            function_kind="reduce",
            reduce_function=lambda a, b: (a[0], a[1] + b[1]),
        ),
        timestamped=False,
    )
    out = tumbling.process(*[("a", i) for i in range(1, 8)], ("b", 100))
    assert [v for v, _ in out] == [("a", 6), ("a", 15)], "the 7th element and b's one wait for more"
    sliding = harness(
        WindowOperatorSpec(
            CountSlidingWindowAssigner.of(3, 2),
            function_kind="apply",
            window_function=lambda k, w, inputs: [(w.id, [v for _, v in inputs])],
        ),
        timestamped=False,
    )
    out = sliding.process(*[("a", i) for i in range(8)])
    assert [v for v, _ in out] == [(0, [0, 1, 2]), (1, [2, 3, 4]), (2, [4, 5, 6])]


def values_in_window(key: Any, window: Any, inputs: Any) -> Any:
    return [[v for _, v in inputs]]


def test_global_windows_with_purging_count_trigger() -> None:
    spec = WindowOperatorSpec(
        GlobalWindows.create(),
        trigger=PurgingTrigger.of(CountTrigger.of(2)),
        function_kind="apply",
        window_function=values_in_window,
    )
    h = harness(spec, timestamped=False)
    out = h.process(*[("a", i) for i in range(5)])
    assert out == [([0, 1], LONG_MAX), ([2, 3], LONG_MAX)], "results carry GlobalWindow's max timestamp"
    assert h.watermark(LONG_MAX) == [], "GlobalWindows never fire on time"


def test_global_windows_with_count_trigger_keep_their_contents() -> None:
    spec = WindowOperatorSpec(
        GlobalWindows.create(),
        trigger=CountTrigger.of(2),
        function_kind="apply",
        window_function=values_in_window,
    )
    out = harness(spec, timestamped=False).process(*[("a", i) for i in range(4)])
    assert [v for v, _ in out] == [[0, 1], [0, 1, 2, 3]]


def test_continuous_event_time_trigger_fires_early_and_at_the_end() -> None:
    spec = WindowOperatorSpec(
        TumblingEventTimeWindows.of(1000),
        trigger=ContinuousEventTimeTrigger.of(300),
        function_kind="process",
        window_function=Contents(),
    )
    h = harness(spec)
    h.process((("k", 1), 10), (("k", 2), 500))
    firings = [v[0][3] for v in h.watermark(350)]
    firings += [v[0][3] for v in h.watermark(2000)]
    assert firings[0] == [1, 2] and firings[-1] == [1, 2] and len(firings) >= 3


def test_processing_time_windows_fire_on_the_clock() -> None:
    clock = Clock(10_000)
    spec = WindowOperatorSpec(
        TumblingProcessingTimeWindows.of(1000), function_kind="process", window_function=Contents()
    )
    h = harness(spec, clock=clock, timestamped=False)
    h.process(("a", 1), ("b", 2))
    clock.now = 10_500
    h.process(("a", 3))
    assert h.set_processing_time(10_998) == []
    fired = h.set_processing_time(10_999)
    assert sorted(v for v, _ in fired) == [("a", 10_000, 11_000, [1, 3]), ("b", 10_000, 11_000, [2])]
    clock.now = 11_200
    h.process(("a", 4))
    assert h.watermark(LONG_MAX) == [], "event time does not fire processing-time windows"
    assert [v for v, _ in h.set_processing_time(12_000)] == [("a", 11_000, 12_000, [4])]


def test_processing_time_sessions_merge_on_the_clock() -> None:
    clock = Clock(0)
    spec = WindowOperatorSpec(
        ProcessingTimeSessionWindows.with_gap(100), function_kind="process", window_function=Contents()
    )
    h = harness(spec, clock=clock, timestamped=False)
    for t, v in [(0, 1), (50, 2), (120, 3)]:
        clock.now = t
        h.process(("k", v))
    assert [v for v, _ in h.set_processing_time(400)] == [("k", 0, 220, [1, 2, 3])]


CLEARED: list[int] = []
"""Filled by Counting.clear: a module-level class pickles by reference, so the operator's copy shares it."""


class Counting(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        per_window = context.window_state().get_state(ValueStateDescriptor("fires", None))
        per_key = context.global_state().get_state(ValueStateDescriptor("total", None))
        per_window.update((per_window.value() or 0) + 1)
        per_key.update((per_key.value() or 0) + 1)
        yield key, context.window().start, per_window.value(), per_key.value(), context.current_watermark()

    def clear(self, context: Any) -> None:
        CLEARED.append(context.window().start)
        context.window_state().get_state(ValueStateDescriptor("fires", None)).clear()


def test_process_window_function_context_state_and_clear() -> None:
    CLEARED.clear()
    spec = WindowOperatorSpec(
        TumblingEventTimeWindows.of(100),
        allowed_lateness_ms=100,
        function_kind="process",
        window_function=Counting(),
    )
    h = harness(spec)
    h.process((("k", 1), 10))
    assert [v for v, _ in h.watermark(150)] == [("k", 0, 1, 1, 150)]
    assert [v for v, _ in h.process((("k", 2), 20))] == [("k", 0, 2, 2, 150)], (
        "late but within lateness: fires again"
    )
    h.process((("k", 3), 120))
    assert [v for v, _ in h.watermark(400)] == [("k", 100, 1, 3, 400)]
    assert sorted(CLEARED) == [0, 100]
    assert h.operator.backend.num_keys("fires") == 0, "clear() removed the per-window state"


def _incremental_spec(assigner: Any, lateness: int, kind: str, window_function: Any) -> WindowOperatorSpec:
    if kind == "aggregate":
        return WindowOperatorSpec(
            assigner,
            allowed_lateness_ms=lateness,
            late_data_tag=LATE,
            function_kind="aggregate",
            aggregate_function=SumValues(),
            window_function=window_function,
        )
    return WindowOperatorSpec(
        assigner,
        allowed_lateness_ms=lateness,
        late_data_tag=LATE,
        function_kind="reduce",
        reduce_function=lambda x, y: (x[0], x[1] + y[1]),
        window_function=window_function,
    )


class StartAndTotal(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        (total,) = elements
        yield key, context.window().start, total


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("lateness", [0, 1500])
@pytest.mark.parametrize("kind", ["aggregate", "reduce"])
@pytest.mark.parametrize(
    "assigner",
    [TumblingEventTimeWindows.of(1000), SlidingEventTimeWindows.of(3000, 1000)],
    ids=["tumbling", "sliding"],
)
@pytest.mark.parametrize("window_function", [None, StartAndTotal()], ids=["plain", "process"])
def test_incremental_windows_inline_equal_generic(
    seed: int, lateness: int, kind: str, assigner: Any, window_function: Any
) -> None:
    """Aggregate and reduce windows: the inline loop (folding straight into the stored value) and
    the generic trigger path emit the same results, late records and firings within the lateness."""
    phases = random_phases(seed)
    results = []
    for fast_path in (True, False):
        h = harness(_incremental_spec(assigner, lateness, kind, window_function))
        assert h.operator.fast_path  # type: ignore[attr-defined]
        h.operator.fast_path = fast_path  # type: ignore[attr-defined]
        results.append(run_phases(h, phases, 1000))
        assert h.operator.backend.num_keys("window-contents") == 0, "every window was cleaned up"
        h.close()
    assert results[0] == results[1]
    assert results[0][0], "windows fired"
    if isinstance(assigner, TumblingEventTimeWindows):
        assert results[0][1], "the input has late records"


@pytest.mark.parametrize(
    "assigner",
    [TumblingEventTimeWindows.of(1000), SlidingEventTimeWindows.of(3000, 1000)],
    ids=["tumbling", "sliding"],
)
def test_inline_loop_errors_name_the_missing_timestamp_and_keep_user_errors(assigner: Any) -> None:
    from flott.errors import FlottError

    h = harness(WindowOperatorSpec(assigner, function_kind="process", window_function=Contents()))
    assert h.operator.fast_path  # type: ignore[attr-defined]
    with pytest.raises(FlottError, match="Record has no timestamp"):
        h.process((("a", 1), 10), (("a", 2), None))

    def bad_key(value: Any) -> Any:
        raise TypeError("user code failed")

    h = OperatorHarness(
        "window",
        WindowOperatorSpec(assigner, function_kind="process", window_function=Contents()),
        key=bad_key,
    )
    with pytest.raises(TypeError, match="user code failed"):
        h.process((("a", 1), 10))


@pytest.mark.parametrize("kind", ["aggregate", "reduce", "process"])
@pytest.mark.parametrize(
    "assigner",
    [TumblingEventTimeWindows.of(1000), SlidingEventTimeWindows.of(3000, 1000)],
    ids=["tumbling", "sliding"],
)
def test_inline_loop_on_rocksdb_with_a_tiny_object_cache_equals_heap(
    kind: str, assigner: Any, tmp_path: Any
) -> None:
    """The inline loop changes stored values through references it just looked up; RocksDB's
    write-back cache (2 entries per generation here) must see every change."""
    phases = random_phases(2)
    results = []
    for config in (
        {"state.backend.type": "hashmap"},
        {
            "state.backend.type": "rocksdb",
            "state.backend.rocksdb.localdir": str(tmp_path / "rocksdb"),
            "state.backend.rocksdb.object-cache.entries": "2",
        },
    ):
        if kind == "process":
            spec = WindowOperatorSpec(
                assigner,
                allowed_lateness_ms=1500,
                late_data_tag=LATE,
                function_kind="process",
                window_function=Contents(),
            )
        else:
            spec = _incremental_spec(assigner, 1500, kind, StartAndTotal())
        h = harness(spec, job_config=config)
        assert h.operator.fast_path  # type: ignore[attr-defined]
        results.append(run_phases(h, phases, 1000))
        h.close()
    assert results[0] == results[1]
    assert results[0][0]
