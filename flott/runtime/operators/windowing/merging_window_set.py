"""The in-flight windows of one key under a merging assigner (Flink's ``MergingWindowSet``).

Session windows grow by merging: a new element's window ``[t, t + gap)`` may
overlap existing sessions, which then become one. Moving a window's contents
on every merge would copy state again and again, so each in-flight window
maps to a *state window*: the namespace its contents are kept under. When
windows merge, the result inherits the state window of one of them and the
other state windows are folded into it (through the merge function), so only
the smaller parts move.

The mapping ``window -> state window`` is itself keyed state (a dict per key
in the operator's backend), so it is checkpointed with everything else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

MergeFunction = Callable[[Any, list[Any], Any, list[Any]], None]
"""``(merge result, merged windows, state window of the result, state windows merged into it)``."""


class _Collect:
    """The MergeCallback handed to the assigner: records each proposed merge."""

    def __init__(self) -> None:
        self.merges: list[tuple[Any, list[Any]]] = []

    def merge(self, to_be_merged: Iterable[Any], merge_result: Any) -> None:
        self.merges.append((merge_result, list(to_be_merged)))


class MergingWindowSet:
    """In-flight windows of one key: ``mapping`` is that key's ``window -> state window`` dict."""

    def __init__(self, assigner: Any, mapping: dict[Any, Any]) -> None:
        self._assigner = assigner
        self.mapping = mapping

    def get_state_window(self, window: Any) -> Any:
        """The namespace holding ``window``'s contents (None: the window is not in flight)."""
        return self.mapping.get(window)

    def retire_window(self, window: Any) -> None:
        """The window is done (fired and cleaned up): forget it."""
        if self.mapping.pop(window, None) is None:
            raise RuntimeError(f"Window {window} is not in in-flight window set.")

    def add_window(self, new_window: Any, merge_function: MergeFunction) -> Any:
        """Add ``new_window``, merging what overlaps; returns the window it ended up in.

        ``merge_function`` is called for each merge that involves existing windows
        (not when the new window just falls inside one existing window), before the
        mapping is used again, so it can move trigger state and contents.
        """
        windows = [*self.mapping, new_window]
        collected = _Collect()
        self._assigner.merge_windows(windows, collected)
        result_window = new_window
        merged_new_window = False
        for merge_result, merged_windows in collected.merges:
            if new_window in merged_windows:
                merged_windows.remove(new_window)
                merged_new_window = True
                result_window = merge_result
            if not merged_windows:
                continue
            # The result lives on in the state window of one merged window; the others fold into it.
            state_windows = [self.mapping.pop(w) for w in merged_windows]
            merged_state_window = state_windows[0]
            merged_state_windows = state_windows[1:]
            self.mapping[merge_result] = merged_state_window
            if not (len(merged_windows) == 1 and merged_windows[0] == merge_result):
                merge_function(merge_result, merged_windows, merged_state_window, merged_state_windows)
        if not merged_new_window:
            self.mapping[new_window] = new_window
        return result_window
