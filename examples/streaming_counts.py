"""An unbounded streaming job: clicks per user, updated as events arrive (PyFlink API, flott prefix).

    flott run examples/streaming_counts.py                 # runs until Ctrl-C
    flott run examples/streaming_counts.py --events 5000   # a bounded run

A generator source produces click events at a fixed rate; the job keeps a
running count per user and prints every 1000th update.
"""

import argparse
import sys

from flott.common import Types, WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy

USERS = ["ada", "bob", "cy", "dee", "eve", "fay", "gus", "hal"]


def click(index: int) -> tuple[str, int]:
    return USERS[(index * 7) % len(USERS)], 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=None, help="stop after this many events")
    parser.add_argument("--rate", type=int, default=2000, help="events per second")
    parser.add_argument("--parallelism", type=int, default=2)
    args, _ = parser.parse_known_args(sys.argv[1:])

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(args.parallelism)
    source = DataGeneratorSource(
        click,
        args.events,
        RateLimiterStrategy.per_second(args.rate),
        Types.TUPLE([Types.STRING(), Types.INT()]),
    )
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "clicks")
        .uid("clicks")
        .key_by(lambda c: c[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .uid("count-per-user")
        .filter(lambda c: c[1] % 1000 == 0)
        .print()
    )
    env.execute("streaming_counts")


if __name__ == "__main__":
    main()
