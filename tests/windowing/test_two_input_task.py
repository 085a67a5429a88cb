"""A two-input task on threads (in-memory exchange): event time is the minimum over both inputs,
and an idle input stops holding it back."""

from __future__ import annotations

import time
from typing import Any

import pytest

from flott.common import Duration, WatermarkStrategy
from flott.common.watermark_strategy import TimestampAssigner
from flott.datastream.functions import KeyedCoProcessFunction
from flott.runtime.operators.specs import KeySelectorPair
from flott.runtime.operators.stream_operator import (
    TIMESTAMPED_INPUT,
    TIMESTAMPED_INPUT2,
    TIMESTAMPED_OUTPUT,
)
from tests.operators.task_harness import (
    Blobs,
    CollectionSource,
    CollectSink,
    UnboundedSource,
    edge,
    op,
    run_job,
    vertex,
)


class Second(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1])


class TimerAfterFirstInput(KeyedCoProcessFunction):
    def process_element1(self, value: Any, ctx: Any) -> Any:
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 400)
        return None

    def process_element2(self, value: Any, ctx: Any) -> Any:
        return None

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield "fired", ctx.get_current_key(), timestamp


@pytest.mark.parametrize("second_input_goes_idle", [False, True])
def test_timers_wait_for_both_inputs_unless_one_is_idle(second_input_goes_idle: bool) -> None:
    blobs, sink = Blobs(), CollectSink()
    ts_out = {TIMESTAMPED_OUTPUT: True}
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Second())
    quiet = strategy.with_idleness(Duration.of_millis(50)) if second_input_goes_idle else strategy
    left = vertex(
        "left",
        1,
        op(blobs, "source", CollectionSource([("k", 100)])),
        op(blobs, "timestamps_watermarks", strategy, config=ts_out),
    )
    right = vertex(  # one record, then nothing, forever
        "right",
        1,
        op(blobs, "source", UnboundedSource([("k", 10)])),
        op(blobs, "timestamps_watermarks", quiet, config=ts_out),
    )
    joined = vertex(
        "joined",
        2,
        op(
            blobs,
            "keyed_co_process",
            TimerAfterFirstInput(),
            key=KeySelectorPair(lambda r: r[0], lambda r: r[0]),
            config={TIMESTAMPED_INPUT: True, TIMESTAMPED_INPUT2: True, **ts_out},
        ),
        op(blobs, "sink", sink, config={TIMESTAMPED_INPUT: True}),
    )
    key = lambda r: r[0]
    run = run_job(
        [left, right, joined],
        [edge(blobs, left, joined, "hash", key), edge(blobs, right, joined, "hash", key, target_input=1)],
        blobs,
        {"pipeline.auto-watermark-interval": "10 ms"},
    )
    deadline = time.monotonic() + (10 if second_input_goes_idle else 0.6)
    while not sink.all() and time.monotonic() < deadline:
        time.sleep(0.01)
    for t in run.all_tasks():
        t.task.cancel()
    run.join()
    if second_input_goes_idle:
        assert sink.all() == [("fired", "k", 500)], "the idle input no longer holds event time back"
    else:
        assert sink.all() == [], "the second input's watermark (9) holds the timer at 500 back"
