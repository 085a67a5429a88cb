"""A job that prints: ``printing_job.py N [DELAY_MS] [PARALLELISM]``.

Each of the numbers ``0..N-1`` is printed by a map (``value <n>`` to stdout; every tenth also
``tenth <n>`` to stderr; before ``value 0`` a line of HTML markup), then by Flink's print sink
(``<subtask>> <n * 2>``); ``DELAY_MS`` per record keeps the job running long enough to kill a
TaskExecutor under it. Restarts: fixed delay, 3 attempts, 500 ms apart.
"""

from __future__ import annotations

import sys
import time

from flott.common.restart_strategy import RestartStrategies
from flott.datastream import StreamExecutionEnvironment


def main(argv: list[str]) -> None:
    n = int(argv[0])
    delay_s = float(argv[1]) / 1000 if len(argv) > 1 else 0.0
    parallelism = int(argv[2]) if len(argv) > 2 else 1

    def shout(x: int) -> int:
        if delay_s:
            time.sleep(delay_s)
        if x == 0:
            print("<b>bold</b>&amp;")  # markup a page must show as text
        print(f"value {x}")
        if x % 10 == 0:
            print(f"tenth {x}", file=sys.stderr)
        return x * 2

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(3, 500))
    env.from_collection(list(range(n))).map(shout).print()
    env.execute("printing job")


if __name__ == "__main__":
    main(sys.argv[1:])
