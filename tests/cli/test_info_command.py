"""``flott info job.py`` prints the plan ``POST /jars/:id/plan`` and ``GET /jobs/:id/plan`` show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROGRAM = """
from flott.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
env.from_collection([1, 2]).key_by(lambda x: x).map(lambda x: x).print()
env.execute("info-job")
"""


def test_info_prints_the_json_plan(tmp_path: Path) -> None:
    job = tmp_path / "job.py"
    job.write_text(PROGRAM)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env["FLOTT_LOG_DIR"] = str(tmp_path / "log")
    done = subprocess.run(
        [sys.executable, "-m", "flott.cli.main", "info", str(job)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["name"] == "info-job" and plan["type"] == "STREAMING"
    source, downstream = plan["nodes"]
    assert source["description"].startswith("Source: Collection Source") and "inputs" not in source
    assert downstream["parallelism"] == 2
    assert downstream["inputs"] == [
        {"num": 0, "id": source["id"], "ship_strategy": "HASH", "exchange": "pipelined_bounded"}
    ]
