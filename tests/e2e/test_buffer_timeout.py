"""``execution.buffer-timeout`` on a real embedded cluster: a record emitted into an output buffer
leaves within the timeout even while the user function that emitted it (or the next one) is still
running, as Flink's OutputFlusher guarantees; with the timeout disabled it waits for a full buffer
or the end.

The proof does not lean on wall-clock thresholds: the upstream function blocks until the
downstream subtask that receives the first record leaves a marker file, so "the marker was there
before the upstream gave up waiting" means the record crossed the network edge while its producer
was still blocked in user code.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Configuration, Types
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.functions import FlatMapFunction, MapFunction
from tests.e2e.conftest import embedded as embedded

BLOCK_LIMIT_S = 20.0
"""How long the upstream waits for the marker when the record should arrive (it takes ~0.1 s)."""

DISABLED_WAIT_S = 2.0
"""How long it waits when the timeout is disabled (the record cannot arrive before it stops)."""


def _wait_for(marker: str, limit_s: float) -> tuple[bool, float]:
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        if os.path.exists(marker):
            return True, time.monotonic() - start
        time.sleep(0.01)
    return False, time.monotonic() - start


class EmitThenBlock(FlatMapFunction):
    """Emits ``first`` for record 0, then blocks in the same call until the marker appears."""

    def __init__(self, marker: str, limit_s: float) -> None:
        self.marker = marker
        self.limit_s = limit_s

    def flat_map(self, value: int) -> Iterator[Any]:
        if value != 0:
            return
        yield "first"
        seen, waited = _wait_for(self.marker, self.limit_s)
        yield ("unblocked", seen, waited)


class BlockOnSecond(MapFunction):
    """Returns ``first`` for record 0 at once; blocks on record 1 until the marker appears."""

    def __init__(self, marker: str, limit_s: float) -> None:
        self.marker = marker
        self.limit_s = limit_s

    def map(self, value: int) -> Any:
        if value == 0:
            return "first"
        seen, waited = _wait_for(self.marker, self.limit_s)
        return ("unblocked", seen, waited)


class MarkFirst(MapFunction):
    """Downstream of the network edge: leaves the marker when ``first`` arrives."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def map(self, value: Any) -> Any:
        if value == "first":
            Path(self.marker).touch()
        return value


def _run(upstream: str, marker: Path, limit_s: float, config: dict[str, str] | None = None) -> list[Any]:
    configuration = Configuration()
    for key, value in (config or {}).items():
        configuration.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(configuration)
    env.set_parallelism(2)
    source = env.from_collection([0, 1], type_info=Types.INT()).set_parallelism(1)
    if upstream == "flat_map":
        blocked = source.flat_map(EmitThenBlock(str(marker), limit_s)).set_parallelism(1)
    else:
        blocked = source.map(BlockOnSecond(str(marker), limit_s)).set_parallelism(1)
    # rebalance: a network edge from the one upstream subtask to two downstream subtasks.
    with blocked.rebalance().map(MarkFirst(str(marker))).execute_and_collect() as results:
        return list(results)


def _unblocked(results: list[Any]) -> tuple[bool, float]:
    [(_, seen, waited)] = [r for r in results if isinstance(r, tuple)]
    assert "first" in results
    return seen, waited


@pytest.mark.parametrize("upstream", ["flat_map", "map"])
def test_a_record_leaves_while_its_producer_blocks_in_user_code(
    embedded: EmbeddedExecutor, tmp_path: Path, upstream: str
) -> None:
    """flat_map: the record waits in the chain's output while the same call blocks; map: it waits
    in the output buffer while the next record's call blocks. Both must be sent within the
    default 100 ms timeout, i.e. long before the upstream would give up after 20 s."""
    seen, waited = _unblocked(_run(upstream, tmp_path / "seen", BLOCK_LIMIT_S))
    assert seen, f"the first record did not reach downstream in {waited:.1f} s while upstream blocked"
    assert waited < BLOCK_LIMIT_S / 2


def test_a_short_buffer_timeout_bounds_the_wait(embedded: EmbeddedExecutor, tmp_path: Path) -> None:
    seen, waited = _unblocked(
        _run("flat_map", tmp_path / "seen", BLOCK_LIMIT_S, {"execution.buffer-timeout.interval": "20 ms"})
    )
    assert seen and waited < BLOCK_LIMIT_S / 2


@pytest.mark.parametrize(
    "config",
    [{"execution.buffer-timeout.enabled": "false"}, {"execution.buffer-timeout": "-1"}],
    ids=["enabled-false", "minus-one"],
)
@pytest.mark.parametrize("upstream", ["flat_map", "map"])
def test_without_buffer_timeout_a_partial_buffer_waits_for_the_end(
    embedded: EmbeddedExecutor, tmp_path: Path, upstream: str, config: dict[str, str]
) -> None:
    """Flink's ``execution.buffer-timeout.enabled: false``: flushed only when full (or at the end),
    so the marker cannot appear while the upstream blocks; the record still arrives at the end."""
    seen, waited = _unblocked(_run(upstream, tmp_path / "seen", DISABLED_WAIT_S, config))
    assert not seen
    assert waited >= DISABLED_WAIT_S
    assert (tmp_path / "seen").exists()
