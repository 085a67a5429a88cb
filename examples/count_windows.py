"""Count windows and global windows with triggers (PyFlink API, flott prefix).

    flott run examples/count_windows.py

* ``count_window(3)``: the sum of every 3 readings of a key;
* ``count_window(3, 2)``: every 2 readings, the sum of a window of 3 (PyFlink's
  count-sliding windows: window ``i`` holds readings ``2i .. 2i+2`` and fires
  when it is full);
* ``GlobalWindows`` with ``PurgingTrigger.of(CountTrigger.of(2))``: the larger
  of every 2 readings. Incomplete windows never fire.

Output (in some order):

    tumbling> (a,6)   tumbling> (a,15)   tumbling> (b,60)
    sliding> (a,6)    sliding> (a,12)    sliding> (b,60)
    pairs> (a,2)      pairs> (a,4)       pairs> (a,6)   pairs> (b,20)   pairs> (b,40)
"""

from flott.common import Types
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.window import CountTrigger, GlobalWindows, PurgingTrigger

READINGS = [
    ("a", 1),
    ("b", 10),
    ("a", 2),
    ("a", 3),
    ("b", 20),
    ("a", 4),
    ("b", 30),
    ("a", 5),
    ("a", 6),
    ("b", 40),
]


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    readings = env.from_collection(READINGS, type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    keyed = readings.key_by(lambda r: r[0], key_type=Types.STRING())
    keyed.count_window(3).reduce(lambda a, b: (a[0], a[1] + b[1])).uid("tumbling").print("tumbling")
    keyed.count_window(3, 2).reduce(lambda a, b: (a[0], a[1] + b[1])).uid("sliding").print("sliding")
    keyed.window(GlobalWindows.create()).trigger(PurgingTrigger.of(CountTrigger.of(2))).reduce(
        lambda a, b: a if a[1] >= b[1] else b
    ).uid("pairs").print("pairs")
    env.execute("count_windows")


if __name__ == "__main__":
    main()
