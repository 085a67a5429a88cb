"""``flott run -m host:port job.py`` on a real session cluster (separate JobManager and TaskManager
processes): execute_and_collect results reach the script, user metrics reach REST."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from tests.cli.test_session_cluster import cluster, flott, get_json, run_dir

__all__ = ["cluster", "run_dir"]

SCRIPT = '''
from flott.common import Types
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.functions import MapFunction


class Counting(MapFunction):
    def open(self, runtime_context):
        self.counter = runtime_context.get_metrics_group().add_group("collected").counter("records")

    def map(self, value):
        self.counter.inc()
        return value * 3


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
ds = env.from_collection(list(range(40)), type_info=Types.INT()).map(Counting(), output_type=Types.INT())
with ds.execute_and_collect("collect on a session cluster") as results:
    print("sum", sum(results))
print("first", env.from_collection([5, 6, 7]).execute_and_collect(limit=2))
'''


def test_collect_and_user_metrics_on_a_session_cluster(
    cluster: tuple[str, list[str]], tmp_path: Path
) -> None:
    address, _ = cluster
    script = tmp_path / "collect_job.py"
    script.write_text(SCRIPT)
    run = flott("run", "-m", address, str(script), timeout=180)
    assert run.returncode == 0, run.stderr
    assert "sum 2340" in run.stdout and "first [5, 6]" in run.stdout, run.stdout

    jobs = get_json(f"http://{address}/jobs/overview")["jobs"]
    (job,) = [j for j in jobs if j["name"] == "collect on a session cluster"]
    assert job["state"] == "FINISHED"
    details = get_json(f"http://{address}/jobs/{job['jid']}")
    (vertex,) = [v["id"] for v in details["vertices"] if "Map" in v["name"]]
    base = f"http://{address}/jobs/{job['jid']}/vertices/{vertex}"
    url = f"{base}/subtasks/metrics?get=Map.collected.records&agg=sum"
    with urllib.request.urlopen(url, timeout=10) as r:
        aggregated = json.loads(r.read())
    assert aggregated == [{"id": "Map.collected.records", "sum": 40.0}]
