"""What internal TLS costs a job: the TLS tests' word count (parallelism 2, a keyBy between two
TaskExecutors) on a session cluster with and without ``security.ssl.internal.*``.

    python3 bench/tls_cost.py [--lines 100000] [--rounds 2]
    python3 bench/tls_cost.py --exchange [--batches 20000]

Prints the wall time of ``flott run`` (attached, submit to FINISHED) and the job's own duration
from the REST API for each round; with ``--exchange``, the records per second one remote channel
between two ShuffleEnvironments of this process moves (batches of 200 small tuples). Not a test:
timings on a shared machine are figures to record, not to assert.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the certificates and jobs of the TLS tests

from tests.security.conftest import start_session_cluster, stop_session_cluster
from tests.security.tls.certificates import internal_tls_config, make_pki
from tests.security.tls.conftest import flott
from tests.security.tls.jobs import read_counts, write_input, write_program


def _round(work: Path, overrides: dict[str, str], lines: int, rounds: int) -> list[tuple[float, float]]:
    program, splitter = write_program(work / "job")
    words = work / "words.txt"
    expected = write_input(words, lines)
    cluster = start_session_cluster(work, task_managers=2, **overrides)
    out: list[tuple[float, float]] = []
    try:
        address = f"127.0.0.1:{cluster.port}"
        for i in range(rounds):
            target = work / f"counts-{i}"
            start = time.perf_counter()
            run = flott("run", "-m", address, "-pyfs", str(splitter), str(program), str(words), str(target),
                        cwd=work, timeout=1800)  # fmt: skip
            wall = time.perf_counter() - start
            if run.returncode != 0:
                raise SystemExit(run.stderr)
            if read_counts(target) != expected:
                raise SystemExit("wrong counts")
            jobs = sorted(cluster.get("/jobs/overview")["jobs"], key=lambda j: j["start-time"])
            out.append((wall, jobs[-1]["duration"] / 1000.0))
    finally:
        stop_session_cluster(cluster)
    return out


def _exchange(batches: int, rounds: int) -> None:
    from flott.configuration import Configuration
    from flott.ssl_context import internal_ssl
    from tests.security.tls.exchange import environment, transfer

    with tempfile.TemporaryDirectory(prefix="flott-tls-cost-") as tmp:
        tls = internal_ssl(Configuration(internal_tls_config(make_pki(Path(tmp)))))
        rates: dict[str, list[float]] = {"plain": [], "internal TLS": []}
        for _ in range(rounds):
            for name, ctx in (("plain", None), ("internal TLS", tls)):
                with environment(ctx) as producer, environment(ctx) as consumer:
                    rates[name].append(transfer(producer, consumer, batches)[1])
    print(f"one remote channel, {batches} batches x 200 records (int, str, float)")
    for name, values in rates.items():
        shown = ", ".join(f"{r / 1e6:.2f}" for r in values)
        print(f"{name:>13}: {shown} M records/s (median {statistics.median(values) / 1e6:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--exchange", action="store_true")
    parser.add_argument("--batches", type=int, default=20_000)
    args = parser.parse_args()
    if args.exchange:
        _exchange(args.batches, args.rounds)
        return
    with tempfile.TemporaryDirectory(prefix="flott-tls-cost-") as tmp:
        root = Path(tmp)
        pki = make_pki(root / "pki")
        results = {}
        for name, overrides in (("plain", {}), ("internal TLS", internal_tls_config(pki))):
            work = root / name.replace(" ", "-")
            work.mkdir()
            results[name] = _round(work, overrides, args.lines, args.rounds)
        print(f"word count, {args.lines} lines x 10 words, parallelism 2 over 2 TaskExecutors")
        for name, rows in results.items():
            walls = ", ".join(f"{w:.2f}" for w, _ in rows)
            jobs = ", ".join(f"{d:.2f}" for _, d in rows)
            print(
                f"{name:>13}: flott run {walls} s (median {statistics.median(w for w, _ in rows):.2f}); "
                f"job duration {jobs} s (median {statistics.median(d for _, d in rows):.2f})"
            )


if __name__ == "__main__":
    main()
