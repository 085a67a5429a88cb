"""Windows at runtime: the window operator, its contents, merging-window sets and window functions."""

from flott.runtime.operators.windowing.merging_window_set import MergingWindowSet
from flott.runtime.operators.windowing.window_operator import WindowOperator

__all__ = ["MergingWindowSet", "WindowOperator"]
