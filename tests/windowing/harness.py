"""Drive one operator by hand: records, watermarks and a hand-made clock, no task, no sockets
(Flink's ``KeyedOneInputStreamOperatorTestHarness``, in spirit)."""

from __future__ import annotations

from typing import Any

from flott.runtime.operators import OperatorSetup, StreamOperator
from flott.runtime.operators.processing_time import ProcessingTimeService
from flott.runtime.operators.stream_operator import (
    TIMESTAMPED_INPUT,
    TIMESTAMPED_INPUT2,
    TIMESTAMPED_OUTPUT,
    CollectingOutput,
)
from flott.runtime.tasks.operator_factory import create_operator
from tests.operators.task_harness import Blobs, make_env, op, vertex


class Clock:
    def __init__(self, now: int = 0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


class OperatorHarness:
    """One operator on ``(value, timestamp)`` records; everything it emits is collected."""

    def __init__(
        self,
        kind: str,
        function: Any,
        *,
        key: Any = None,
        timestamped: bool = True,
        config: dict[str, Any] | None = None,
        job_config: dict[str, str] | None = None,
        clock: Clock | None = None,
        batch_size: int = 1024,
        streaming: bool = True,
    ) -> None:
        blobs = Blobs()
        cfg: dict[str, Any] = dict(config or {})
        if timestamped:
            cfg.setdefault(TIMESTAMPED_INPUT, True)
            cfg.setdefault(TIMESTAMPED_OUTPUT, True)
            if kind.startswith("co_") or kind == "keyed_co_process":
                cfg.setdefault(TIMESTAMPED_INPUT2, True)
        descriptor = op(blobs, kind, function, key=key, config=cfg)
        env = make_env(vertex("v", 1, descriptor), blobs, config=job_config)
        self.clock = clock or Clock()
        self.pts = ProcessingTimeService(self.clock)
        self.operator: StreamOperator = create_operator(
            OperatorSetup(env, descriptor, streaming, batch_size, set(), self.pts)
        )
        self.output = CollectingOutput()
        self.operator.set_output(self.output)
        self.operator.open()
        self.emitted: list[Any] = []

    def process(self, *records: Any) -> list[Any]:
        """Feed records (pairs when timestamped); returns and keeps what came out of the batch."""
        out = self.operator.process_batch(list(records))
        self.emitted.extend(out)
        return out

    def process2(self, *records: Any) -> list[Any]:
        out = self.operator.process_batch2(list(records))
        self.emitted.extend(out)
        return out

    def watermark(self, timestamp: int) -> list[Any]:
        """Advance event time; returns the records the operator emitted because of it."""
        self.operator.process_watermark(timestamp)
        fired = self.output.take()
        self.emitted.extend(fired)
        return fired

    def set_processing_time(self, now: int) -> list[Any]:
        self.clock.now = now
        self.pts.fire_due()
        fired = self.output.take()
        self.emitted.extend(fired)
        return fired

    def close(self) -> None:
        self.operator.close()
