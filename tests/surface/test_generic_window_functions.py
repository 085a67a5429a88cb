"""Window functions written the way PyFlink's typed examples write them run on flott.

No ``from __future__ import annotations`` here, on purpose: annotations must be
evaluated when the classes are defined, as in a user's module, because that is
where ``ProcessWindowFunction.Context[TimeWindow]`` used to fail with
``TypeError: type 'Context' is not subscriptable``.
"""

import ast
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Encoder, Time, WatermarkStrategy
from flott.common.watermark_strategy import TimestampAssigner
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.file_system import FileSink
from flott.datastream.functions import ProcessAllWindowFunction, ProcessWindowFunction
from flott.datastream.window import TimeWindow, TumblingEventTimeWindows
from tests.e2e.conftest import read_output_lines

EVENTS = [("a", 1), ("b", 2), ("a", 3), ("a", 12), ("b", 15), ("b", 27)]


class ByTimestamp(TimestampAssigner):
    def extract_timestamp(self, value: tuple[str, int], record_timestamp: int) -> int:
        return value[1]


class KeyedContents(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
    def process(
        self, key: str, context: ProcessWindowFunction.Context[TimeWindow], elements: Iterable[tuple]
    ) -> Iterable[tuple]:
        window: TimeWindow = context.window()
        yield key, window.start, window.end, sorted(ts for _, ts in elements)


class AllContents(ProcessAllWindowFunction[tuple, tuple, TimeWindow]):
    def process(
        self, context: ProcessAllWindowFunction.Context[TimeWindow], elements: Iterable[tuple]
    ) -> Iterable[tuple]:
        window = context.window()
        yield "all", window.start, window.end, sorted(ts for _, ts in elements)


def _sink(path: Path) -> Any:
    return FileSink.for_row_format(str(path), Encoder.simple_string_encoder()).build()


def _records(path: Path) -> list[Any]:
    return sorted(ast.literal_eval(line) for line in read_output_lines(path))


@pytest.mark.filterwarnings("ignore::flott.graph.MissingUidWarning")
def test_generic_process_window_functions_with_subscripted_contexts_run(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ByTimestamp())
    events = env.from_collection(EVENTS).assign_timestamps_and_watermarks(strategy)
    windows = TumblingEventTimeWindows.of(Time.milliseconds(10))
    events.key_by(lambda e: e[0]).window(windows).process(KeyedContents()).sink_to(_sink(tmp_path / "keyed"))
    events.window_all(windows).process(AllContents()).sink_to(_sink(tmp_path / "all"))
    env.execute("generic window functions")

    assert _records(tmp_path / "keyed") == [
        ("a", 0, 10, [1, 3]),
        ("a", 10, 20, [12]),
        ("b", 0, 10, [2]),
        ("b", 10, 20, [15]),
        ("b", 20, 30, [27]),
    ]
    assert _records(tmp_path / "all") == [
        ("all", 0, 10, [1, 2, 3]),
        ("all", 10, 20, [12, 15]),
        ("all", 20, 30, [27]),
    ]
