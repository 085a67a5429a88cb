"""REST throughput and job-submission latency: kept for its old command line.

    python bench/rest_bench.py [--quick] [--rounds 3] [--duration 10] [--no-peers]

Everything it measured (flott's REST endpoint with wrk beside a bare aiohttp server
returning the same JSON, and submit → all tasks RUNNING) is now part of
bench/control_plane.py, which also runs a Flink 2.3 session cluster beside flott
when bench/.venv-peers exists; this script runs that benchmark.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from control_plane import main

if __name__ == "__main__":
    sys.exit(main())
