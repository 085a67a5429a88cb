"""Brute-force references for windowed results, written independently of flott's operators.

Each takes the input as *phases*: the records of a phase arrive with the watermark
reached after the previous phase, and after each phase the watermark becomes
``max timestamp so far - out_of_orderness - 1`` (what a bounded-out-of-orderness
strategy emits on its next periodic tick); after the last phase, ``Long.MAX_VALUE``.
Records are ``(key, timestamp, value)``. Results are multisets (sorted lists):
parallel subtasks interleave their outputs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1

Record = tuple[str, int, int]


def watermarks(phases: list[list[Record]], out_of_orderness: int) -> Iterator[tuple[int, list[Record], int]]:
    """``(watermark seen by the phase's records, phase, watermark after the phase)`` per phase."""
    seen = LONG_MIN
    current = LONG_MIN
    for index, phase in enumerate(phases):
        for _, ts, _ in phase:
            seen = max(seen, ts)
        after = LONG_MAX if index == len(phases) - 1 else max(current, seen - out_of_orderness - 1)
        yield current, phase, after
        current = after


def time_windows(ts: int, size: int, slide: int) -> list[tuple[int, int]]:
    """Every ``[start, start + size)`` with ``start`` a multiple of ``slide`` that contains ``ts``."""
    first = (ts - size) // slide * slide
    return [(s, s + size) for s in range(first, ts + 1, slide) if s <= ts < s + size]


def sliding_windows(
    phases: list[list[Record]],
    out_of_orderness: int,
    size: int,
    slide: int,
    allowed_lateness: int,
    result: Callable[[str, tuple[int, int], list[int]], Any],
) -> tuple[list[Any], list[Record]]:
    """Outputs (one per firing) and late records of event-time sliding (or tumbling) windows.

    A window fires when the watermark reaches its last millisecond, and again for
    each element added within the allowed lateness; it is gone once the watermark
    passes end - 1 + lateness. A record none of whose windows is alive is late.
    """
    contents: dict[tuple[str, tuple[int, int]], list[int]] = defaultdict(list)
    fired: set[tuple[str, tuple[int, int]]] = set()
    outputs: list[Any] = []
    late: list[Record] = []
    for wm, phase, after in watermarks(phases, out_of_orderness):
        for key, ts, value in phase:
            alive = [w for w in time_windows(ts, size, slide) if w[1] - 1 + allowed_lateness > wm]
            if not alive:
                if ts + allowed_lateness <= wm:
                    late.append((key, ts, value))
                continue
            for w in alive:
                contents[(key, w)].append(value)
                if w[1] - 1 <= wm:  # already past the end, within lateness: fires at once
                    fired.add((key, w))
                    outputs.append(result(key, w, list(contents[(key, w)])))
        for (key, w), values in sorted(contents.items()):
            if (key, w) not in fired and w[1] - 1 <= after:
                fired.add((key, w))
                outputs.append(result(key, w, list(values)))
    return sorted(outputs), sorted(late)


def session_windows(
    phases: list[list[Record]],
    out_of_orderness: int,
    gap: int,
    result: Callable[[str, tuple[int, int], list[int]], Any],
) -> tuple[list[Any], list[Record]]:
    """Outputs and late records of event-time session windows (allowed lateness 0).

    Each element opens ``[ts, ts + gap)``; windows that touch or overlap merge
    (so an element whose own window is behind the watermark still joins a live
    session it touches); a session fires (and is gone) once the watermark reaches
    its end - 1. An element whose window, merged, is behind the watermark is late.
    """
    sessions: dict[str, list[tuple[int, int, list[int]]]] = defaultdict(list)
    outputs: list[Any] = []
    late: list[Record] = []
    for wm, phase, after in watermarks(phases, out_of_orderness):
        for key, ts, value in phase:
            start, end, values = ts, ts + gap, [value]
            keep = []
            for s, e, vs in sessions[key]:
                if s <= end and e >= start:
                    start, end, values = min(s, start), max(e, end), vs + values
                else:
                    keep.append((s, e, vs))
            if end - 1 <= wm:
                late.append((key, ts, value))
                continue
            keep.append((start, end, values))
            sessions[key] = keep
        for key in sorted(sessions):
            remaining = []
            for s, e, vs in sessions[key]:
                if e - 1 <= after:
                    outputs.append(result(key, (s, e), sorted(vs)))
                else:
                    remaining.append((s, e, vs))
            sessions[key] = remaining
    return sorted(outputs), sorted(late)
