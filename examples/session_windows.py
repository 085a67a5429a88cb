"""Event-time session windows: clicks per user session, a session ending after 3 s without clicks.

    flott run examples/session_windows.py

``EventTimeSessionWindows.with_gap(3 s)`` opens a window ``[t, t + 3 s)`` per
click and merges windows that touch; a WindowFunction reports each session.
``DynamicEventTimeSessionWindows`` takes the gap from the element instead
(here: 1 s for the "mobile" channel, so its clicks split into more sessions).

Output (in some order):

    (alice,1000,7000,3)   (alice,9500,13500,2)   (bob,1500,4500,1)   (bob,9000,13000,2)
    mobile> (carol,1000,2000,1)   mobile> (carol,2500,3800,2)
"""

from flott.common import Duration, Types, WatermarkStrategy
from flott.common.time import Time
from flott.common.watermark_strategy import TimestampAssigner
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.functions import WindowFunction
from flott.datastream.window import (
    DynamicEventTimeSessionWindows,
    EventTimeSessionWindows,
    SessionWindowTimeGapExtractor,
)

CLICKS = [  # (user, epoch ms, channel)
    ("alice", 1_000, "web"),
    ("bob", 1_500, "web"),
    ("alice", 2_500, "web"),
    ("alice", 9_500, "web"),
    ("alice", 4_000, "web"),
    ("bob", 9_000, "web"),
    ("alice", 10_500, "web"),
    ("bob", 10_000, "web"),
    ("carol", 1_000, "mobile"),
    ("carol", 2_500, "mobile"),
    ("carol", 2_800, "mobile"),
]
SESSION = Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG(), Types.INT()])


class ClickTimestamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class SessionSummary(WindowFunction):
    def apply(self, key, window, inputs):
        return [(key, window.start, window.end, len(list(inputs)))]


class GapByChannel(SessionWindowTimeGapExtractor):
    def extract(self, element):
        return 1_000 if element[2] == "mobile" else 3_000


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    clicks = env.from_collection(
        CLICKS, type_info=Types.TUPLE([Types.STRING(), Types.LONG(), Types.STRING()])
    ).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(6)).with_timestamp_assigner(
            ClickTimestamp()
        )
    )
    clicks.filter(lambda c: c[2] == "web").key_by(lambda c: c[0], key_type=Types.STRING()).window(
        EventTimeSessionWindows.with_gap(Time.seconds(3))
    ).apply(SessionSummary(), output_type=SESSION).uid("web-sessions").print()
    clicks.filter(lambda c: c[2] == "mobile").key_by(lambda c: c[0], key_type=Types.STRING()).window(
        DynamicEventTimeSessionWindows.with_dynamic_gap(GapByChannel())
    ).apply(SessionSummary(), output_type=SESSION).uid("mobile-sessions").print("mobile")
    env.execute("session_windows")


if __name__ == "__main__":
    main()
