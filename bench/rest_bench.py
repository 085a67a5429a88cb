"""REST throughput and latency of a flott session cluster, beside a bare aiohttp server.

    python bench/rest_bench.py [--duration 10] [--rounds 3] [--quick]

Starts ``flott jobmanager start --taskmanagers 2`` on free loopback ports with one
running job, then measures with wrk (16 connections, 2 threads):
``GET /overview`` and ``GET /jobs/overview``. The reference, measured in the same
run and interleaved with flott, is a bare aiohttp handler returning the very same
JSON bytes: the ceiling of the HTTP stack flott's endpoint is built on. It also
measures job submission latency through RestClusterClient: from the submit call to
the job's status RUNNING with every task RUNNING (polled every 5 ms).
Needs ``wrk`` (Debian package; ``bench/setup`` installs it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as r:
        return bytes(r.read())


def wait_until(check, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


_UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def run_wrk(url: str, duration: float, connections: int = 16) -> tuple[float, float, float]:
    """(requests/s, p50 ms, p99 ms) as wrk reports them."""
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{max(1, round(duration))}s", "--latency", url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]

    def pct(p: str) -> float:
        m = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", out)
        assert m, out
        return float(m.group(1)) * _UNIT[m.group(2)]

    return rps, pct("50"), pct("99")


BARE_SERVER = textwrap.dedent("""
    import sys
    from aiohttp import web
    bodies = {path: open(file, "rb").read() for path, file in zip(sys.argv[2::2], sys.argv[3::2])}
    app = web.Application()
    for path, body in bodies.items():
        async def handler(request, body=body):
            return web.Response(body=body, content_type="application/json")
        app.router.add_get(path, handler)
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None)
""")

STREAMING_JOB = textwrap.dedent("""
    from flott.common import Types, WatermarkStrategy
    from flott.datastream import StreamExecutionEnvironment
    from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    src = DataGeneratorSource(lambda i: i, None, RateLimiterStrategy.per_second(100), Types.LONG())
    env.from_source(src, WatermarkStrategy.no_watermarks(), "numbers").filter(lambda x: x < 0).print()
""")


def build_job_graph():  # type: ignore[no-untyped-def]
    from flott.graph import build_job_graph as build

    namespace: dict[str, object] = {}
    exec(STREAMING_JOB, namespace)
    return build(namespace["env"], "rest-bench")


async def submission_latency(address: str, count: int) -> list[float]:
    from flott.client.rest_cluster_client import RestClusterClient

    samples = []
    async with RestClusterClient(None, address) as client:
        for _ in range(count):
            graph = build_job_graph()
            start = time.perf_counter()
            await client.submit_job(graph)
            while True:
                details = await client.get_job_details(graph.job_id)
                tasks = details.vertices
                if details.state == "RUNNING" and all(
                    v.tasks.get("RUNNING", 0) == v.parallelism for v in tasks
                ):
                    break
                await asyncio.sleep(0.005)
            samples.append((time.perf_counter() - start) * 1000)
            await client.cancel_job(graph.job_id)
            while (await client.get_job_status(graph.job_id)) != "CANCELED":
                await asyncio.sleep(0.01)
    return samples


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--submissions", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="1 s per wrk run, 1 round, 3 submissions")
    args = ap.parse_args()
    if args.quick:
        args.duration, args.rounds, args.submissions = 1.0, 1, 3
    if shutil.which("wrk") is None:
        print("wrk is not installed (apt-get install wrk, or bench/setup)", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="flott-rest-bench-"))
    rest_port, bare_port = free_port(), free_port()
    jm = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "flott.cli.main",
            "jobmanager",
            "start",
            "--taskmanagers",
            "2",
            "-D",
            f"rest.port={rest_port}",
            "-D",
            "jobmanager.rpc.port=0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    bare = None
    try:
        base = f"http://127.0.0.1:{rest_port}"
        wait_until(lambda: json.loads(get(base + "/overview"))["taskmanagers"] == 2, 60, "the cluster")
        # one running job so /jobs/overview has a row
        from flott.client.rest_cluster_client import RestClusterClient

        async def submit_one() -> str:
            async with RestClusterClient(None, f"127.0.0.1:{rest_port}") as client:
                return await client.submit_job(build_job_graph())

        running = asyncio.run(submit_one())
        wait_until(lambda: json.loads(get(f"{base}/jobs/{running}"))["state"] == "RUNNING", 30, "the job")
        paths = ["/overview", "/jobs/overview"]
        files = []
        for p in paths:
            f = tmp / (p.strip("/").replace("/", "_") + ".json")
            f.write_bytes(get(base + p))
            files += [p, str(f)]
        bare = subprocess.Popen(
            [sys.executable, "-c", BARE_SERVER, str(bare_port), *files],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(lambda: bool(get(f"http://127.0.0.1:{bare_port}/overview")), 30, "the bare server")
        results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        for _ in range(args.rounds):
            for p in paths:
                for name, port in (("flott", rest_port), ("bare aiohttp", bare_port)):
                    results.setdefault((p, name), []).append(
                        run_wrk(f"http://127.0.0.1:{port}{p}", args.duration)
                    )
        latencies = asyncio.run(submission_latency(f"127.0.0.1:{rest_port}", args.submissions))
    finally:
        for proc in (bare, jm):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)

    print(
        f"\nREST endpoint, wrk -t2 -c16 -d{args.duration:g}s, {args.rounds} interleaved round(s), medians\n"
    )
    print("| request | server | requests/s | p50 ms | p99 ms | flott / bare |")
    print("|---|---|---|---|---|---|")
    for p in paths:
        bare_rps = statistics.median(r[0] for r in results[(p, "bare aiohttp")])
        for name in ("flott", "bare aiohttp"):
            rs = results[(p, name)]
            rps = statistics.median(r[0] for r in rs)
            print(
                f"| GET {p} | {name} | {rps:,.0f} | {statistics.median(r[1] for r in rs):.2f} | "
                f"{statistics.median(r[2] for r in rs):.2f} | {rps / bare_rps:.2f} |"
            )
    print(
        f"\nJob submission, submit -> all tasks RUNNING, {len(latencies)} jobs: "
        f"median {statistics.median(latencies):.0f} ms, "
        f"min {min(latencies):.0f} ms, max {max(latencies):.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
