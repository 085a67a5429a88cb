"""Test sources for event-time jobs on the embedded cluster.

:class:`PhasedSource` hands out its records a *phase* at a time, each phase as
one batch, and pauses between phases long enough for a periodic watermark to
be emitted (set ``pipeline.auto-watermark-interval`` well below the pause). So
the watermark each record sees is known in advance, which is what lets a test
compute the exact expected output, late records included, by brute force.
"""

from __future__ import annotations

import time
from typing import Any

from flott.datastream.connectors.base import Boundedness


class _PhasedReader:
    def __init__(self, phases: list[list[Any]], pause_s: float, initial_delay_s: float) -> None:
        self._phases = list(phases)
        self._pause_s = pause_s
        self._next_at = time.monotonic() + initial_delay_s

    def poll_batch(self, max_records: int) -> list[Any] | None:
        now = time.monotonic()
        if now < self._next_at:
            time.sleep(min(0.005, self._next_at - now))
            return []
        if not self._phases:
            return None
        # A phase goes out whole even when the task asks for fewer records (its batches start at
        # one record and grow): records that must see the same watermark travel together.
        phase = self._phases.pop(0)
        self._next_at = now + self._pause_s
        return phase

    def close(self) -> None:
        pass


class PhasedSource:
    """Bounded, non-parallel: ``phases`` of records with ``pause_s`` seconds between phases.

    ``initial_delay_s`` holds the first phase back, e.g. until downstream tasks are surely running.
    """

    def __init__(self, phases: list[list[Any]], pause_s: float = 0.15, initial_delay_s: float = 0.0) -> None:
        self.phases = phases
        self.pause_s = pause_s
        self.initial_delay_s = initial_delay_s

    def get_boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED

    def get_max_parallelism(self) -> int:
        return 1

    def create_reader(self, subtask_index: int, parallelism: int) -> _PhasedReader:
        return _PhasedReader(self.phases if subtask_index == 0 else [], self.pause_s, self.initial_delay_s)
