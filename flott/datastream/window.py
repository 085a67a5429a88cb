"""Windows, window assigners and triggers (PyFlink's ``pyflink.datastream.window``).

They live on the ground floor (``flott.api.streaming.windowing``, Flink's
``streaming.api.windowing``), where the window operator drives them; this module hands them out
under PyFlink's import path.
"""

from __future__ import annotations

from flott.api.streaming.windowing import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountSlidingWindowAssigner,
    CountTrigger,
    CountTumblingWindowAssigner,
    CountWindow,
    CountWindowSerializer,
    DynamicEventTimeSessionWindows,
    DynamicProcessingTimeSessionWindows,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindow,
    GlobalWindows,
    GlobalWindowSerializer,
    MergingWindowAssigner,
    NeverTrigger,
    ProcessingTimeSessionWindows,
    ProcessingTimeTrigger,
    PurgingTrigger,
    SessionWindowTimeGapExtractor,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    TimeWindowSerializer,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    Window,
    WindowAssigner,
)

__all__ = [
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountSlidingWindowAssigner",
    "CountTrigger",
    "CountTumblingWindowAssigner",
    "CountWindow",
    "CountWindowSerializer",
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "GlobalWindow",
    "GlobalWindowSerializer",
    "GlobalWindows",
    "MergingWindowAssigner",
    "NeverTrigger",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeWindow",
    "TimeWindowSerializer",
    "Trigger",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "Window",
    "WindowAssigner",
]
