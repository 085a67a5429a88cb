"""Checkpointing: steady-state throughput overhead, and checkpoint/savepoint cost of ~1 GB keyed state.

    python bench/checkpoint_bench.py [--quick] [--rounds 3] [--records 6000000] [--intervals 1000,10000]
                                     [--keys 1000000] [--value-bytes 1000] [--backends hashmap,rocksdb]
                                     [--only throughput,state,slow,async,incremental]
                                     [--slow-record-ms 50] [--phase-mb 200] [--phase-intervals 8]
                                     [--no-peers] [--summary FILE]

``--quick``: 300,000 records (every 1 s only), 50 MB of state (50,000 keys), 2 savepoints of
the slow-map job, 1 round, one cluster for everything: about 30 s. ``--summary FILE``
appends this benchmark's rows of bench/run's summary table to FILE (JSON lines, see
bench/summary.py).

Everything runs on a flott session cluster started for the purpose (``flott jobmanager start
--taskmanagers 2``: a JobManager and two local TaskExecutor processes of one slot each, REST on
loopback), jobs submitted with ``flott run -m ... -d``; all figures come from the cluster's REST
API (``GET /jobs/:id``, ``GET /jobs/:id/checkpoints`` in Flink's shape) and from the job itself.

1. **Throughput overhead** of checkpointing every 1 s (and every 10 s) vs none. A STREAMING keyed
   running count at parallelism 2: ``NumberSequenceSource(0, records-1) -> map(n -> (n % 100000,
   1)) -> key_by -> reduce(sum)`` into a sink that only counts (one update per record, all of them
   reach the sink). The same job without checkpoints and with ``enable_checkpointing(interval)`` to a
   local directory, on one cluster, interleaved, the order rotating from round to round. Steady-state
   records/s is read at the sink: each sink subtask samples its running count every 50 ms, and the
   rate is taken between the moments 10% and 90% of all records had arrived (start-up, the last
   partial batches and the final checkpoint at end of input are outside that window). Also: the
   job's RUNNING -> FINISHED time, the checkpoints completed, their end-to-end durations (the summary
   of ``/jobs/:id/checkpoints``) and state size.
2. **~1 GB of keyed state**, per state backend (``state.backend.type``: ``hashmap`` and
   ``rocksdb``; the second only if ``flott.runtime.state.rocksdb`` imports). A source emits the keys
   ``0..keys-1`` once, then idles (unbounded, so the job keeps running); a KeyedProcessFunction
   stores ``os.urandom(value_bytes)`` in a ValueState per key (random bytes: the snapshot size is
   the state size, nothing compresses). Periodic checkpoints every 30 s with a 60 s minimum pause
   (so no periodic checkpoint runs during the savepoint). Measured: the fill time (job RUNNING -> the
   sources' last key emitted), the end-to-end duration of the first periodic checkpoint triggered
   after the fill (so it holds all of the state), then a savepoint triggered through ``POST
   /jobs/:id/savepoints``: wall time trigger -> COMPLETED (polling every 50 ms) and the savepoint
   directory's size on disk; RocksDB's working directory size; peak RSS of the TaskExecutors
   (psutil, every 250 ms). A fresh cluster per run, backends alternating.
3. **A savepoint while a slow function runs**: an unbounded source chained with a map that takes
   ``--slow-record-ms`` (50) per record, p=2, no periodic checkpoints; ``--slow-savepoints``
   savepoints per round, each trigger -> COMPLETED (polled every 10 ms) and the cluster's
   end-to-end duration. Flink's mailbox takes the trigger between two records (target ≤ 0.2 s).

4. **async** and 5. **incremental** (bench/snapshot_phases.py, in-process, no cluster): how long
   the task stops per checkpoint, synchronous snapshot vs asynchronous phase; and for RocksDB with
   1 % of the keys changed per interval, bytes and time of full vs incremental checkpoints.
   ``--phase-mb`` sizes the state (default 200 MB; 20 with ``--quick``).

A task's checkpoint has a synchronous part (capture: heap values copied, a RocksDB native
checkpoint; sinks pre-commit; the barrier goes on) and an asynchronous part that writes and
acknowledges (flott/runtime/tasks/subtask_checkpoint_coordinator.py). Savepoints and full
checkpoints are the same canonical per-key-group files; incremental RocksDB checkpoints upload
table files.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import snapshot_phases  # noqa: E402
from benchlib import (  # noqa: E402
    REPO,
    RssSampler,
    add_summary,
    fmt_num,
    free_port,
    get_json,
    log,
    markdown_table,
    ratio_cell,
    stop,
    summary,
    wait_until,
)

FLOTT = [sys.executable, "-m", "flott.cli.main"]

JOB = textwrap.dedent('''
    """checkpoint_bench job: written by bench/checkpoint_bench.py, parameters as JSON in argv[1]."""
    import json
    import os
    import sys
    import time

    from flott.common import Types
    from flott.common.watermark_strategy import WatermarkStrategy
    from flott.datastream import StreamExecutionEnvironment
    from flott.datastream.connectors.base import Boundedness
    from flott.datastream.connectors.number_seq import NumberSequenceSource
    from flott.datastream.functions import KeyedProcessFunction
    from flott.datastream.state import ValueStateDescriptor

    P = json.loads(sys.argv[1])


    class CountingWriter:
        """Counts what arrives; samples (time, count) every 50 ms; writes the samples at the end."""

        def __init__(self, path):
            self.path, self.count, self.last, self.samples = path, 0, 0.0, []

        def write_batch(self, records):
            self.count += len(records)
            now = time.time()
            if now - self.last >= 0.05:
                self.samples.append((now, self.count))
                self.last = now

        def flush(self, end_of_input):
            if end_of_input:
                self._dump()

        def close(self):
            self._dump()

        def _dump(self):
            if self.path is not None:
                self.samples.append((time.time(), self.count))
                with open(self.path, "w") as f:
                    json.dump(self.samples, f)
                self.path = None


    class CountingSink:
        def __init__(self, directory):
            self.directory = directory

        def create_writer(self, subtask_index, parallelism, input_type):
            if self.directory is None:
                return CountingWriter(None)
            return CountingWriter(os.path.join(self.directory, f"sink-{subtask_index}.json"))


    class KeysThenIdleReader:
        """The keys [lo, hi) once, then nothing (the job keeps running); a marker file when done."""

        def __init__(self, lo, hi, marker):
            self.next, self.hi, self.marker = lo, hi, marker

        def poll_batch(self, max_records):
            if self.next >= self.hi:
                if self.marker is not None:
                    with open(self.marker + ".tmp", "w") as f:
                        f.write(repr(time.time()))
                    os.replace(self.marker + ".tmp", self.marker)
                    self.marker = None
                time.sleep(0.02)
                return []
            stop = min(self.next + max_records, self.hi)
            out = list(range(self.next, stop))
            self.next = stop
            return out

        def snapshot_state(self, checkpoint_id):
            return [(self.next, self.hi)]

        def close(self):
            pass


    class KeysThenIdle:
        def __init__(self, keys, marker_dir):
            self.keys, self.marker_dir = keys, marker_dir

        def get_boundedness(self):
            return Boundedness.CONTINUOUS_UNBOUNDED

        def get_produced_type(self):
            return Types.LONG()

        def create_reader(self, subtask_index, parallelism):
            lo = self.keys * subtask_index // parallelism
            hi = self.keys * (subtask_index + 1) // parallelism
            return KeysThenIdleReader(lo, hi, os.path.join(self.marker_dir, f"filled-{subtask_index}"))


    VALUE_BYTES = P.get("value_bytes", 0)


    class Fill(KeyedProcessFunction):
        """One ValueState per key, holding VALUE_BYTES random bytes."""

        def open(self, runtime_context):
            self.blob = runtime_context.get_state(ValueStateDescriptor("blob", Types.PICKLED_BYTE_ARRAY()))

        def process_element(self, value, ctx):
            self.blob.update(os.urandom(VALUE_BYTES))


    KEYS = P.get("keys", 1)


    class EndlessReader:
        """0, 1, 2, ... as asked for, forever (an unbounded source that never waits)."""

        def __init__(self):
            self.next = 0

        def poll_batch(self, max_records):
            out = list(range(self.next, self.next + max_records))
            self.next += max_records
            return out

        def snapshot_state(self, checkpoint_id):
            return [self.next]

        def close(self):
            pass


    class Endless:
        def get_boundedness(self):
            return Boundedness.CONTINUOUS_UNBOUNDED

        def get_produced_type(self):
            return Types.LONG()

        def create_reader(self, subtask_index, parallelism):
            return EndlessReader()


    SLOW_S = P.get("record_ms", 0) / 1000


    def slow(n):
        time.sleep(SLOW_S)
        return n


    def pair(n):
        return (n % KEYS, 1)


    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.configure({"state.backend.type": P["backend"], "state.backend.rocksdb.localdir": P["local_dir"]})
    if P["interval_ms"] > 0:
        env.enable_checkpointing(P["interval_ms"])
        if P.get("min_pause_ms"):
            env.get_checkpoint_config().set_min_pause_between_checkpoints(P["min_pause_ms"])
        env.get_checkpoint_config().set_checkpoint_storage_dir(P["checkpoint_dir"])
    if P["mode"] == "throughput":
        (
            env.from_source(
                NumberSequenceSource(0, P["records"] - 1), WatermarkStrategy.no_watermarks(), "numbers"
            )
            .uid("numbers")
            .map(pair, output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
            .uid("pairs")
            .key_by(lambda t: t[0])
            .reduce(lambda a, b: (a[0], a[1] + b[1]))
            .uid("counts")
            .sink_to(CountingSink(P["progress_dir"]))
            .uid("sink")
        )
    elif P["mode"] == "slow":
        (
            env.from_source(Endless(), WatermarkStrategy.no_watermarks(), "numbers")
            .uid("numbers")
            .map(slow, output_type=Types.LONG())
            .uid("slow")
            .sink_to(CountingSink(None))
            .uid("sink")
        )
    else:
        (
            env.from_source(
                KeysThenIdle(P["keys"], P["marker_dir"]), WatermarkStrategy.no_watermarks(), "keys"
            )
            .uid("keys")
            .key_by(lambda k: k, key_type=Types.LONG())
            .process(Fill(), output_type=Types.LONG())
            .uid("fill")
            .sink_to(CountingSink(None))
            .uid("sink")
        )
    env.execute(f"checkpoint-bench-{P['mode']}")
''')


def du(path: Path) -> int:
    """Bytes in the files under ``path`` (0 if it does not exist)."""
    if not path.exists():
        return 0
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def rocksdb_available() -> tuple[bool, str]:
    try:
        import flott.runtime.state.rocksdb  # noqa: F401
        from flott.runtime.operators.state_backend_loader import state_backend_type

        state_backend_type({"state.backend.type": "rocksdb"})
    except Exception as e:  # ImportError, or a loader that does not know the name yet
        return False, f"{type(e).__name__}: {e}"
    return True, ""


def loadavg() -> str:
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n / 1e3:,.0f} kB"


def secs(values: list[float], digits: int = 2) -> tuple[str, str]:
    med, lo, hi = summary(values)
    return f"{med:.{digits}f}", f"{lo:.{digits}f} / {hi:.{digits}f}"


class Session:
    """A flott session cluster: ``flott jobmanager start --taskmanagers 2`` in the foreground, ours."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.rest_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.sampler: RssSampler | None = None
        (workdir / "job.py").write_text(JOB)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    def __enter__(self) -> Session:
        rpc = free_port()
        conf = [
            *("-D", f"rest.port={self.rest_port}", "-D", "rest.address=127.0.0.1"),
            *("-D", f"jobmanager.rpc.port={rpc}", "-D", "jobmanager.rpc.address=127.0.0.1"),
            *("-D", "taskmanager.numberOfTaskSlots=1", "-D", f"io.tmp.dirs={self.workdir}"),
        ]
        with open(self.workdir / "jobmanager.log", "ab") as err:
            self.proc = subprocess.Popen(
                [*FLOTT, "jobmanager", "start", "--taskmanagers", "2", *conf],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
                cwd=str(REPO),
            )

        def label(p: Any, depth: int) -> str | None:
            if depth == 0:
                return "JobManager"
            try:
                return "TaskExecutor" if "taskexecutor" in " ".join(p.cmdline()) else None
            except Exception:
                return None

        self.sampler = RssSampler(self.proc.pid, label, interval=0.25)
        self.sampler.__enter__()
        wait_until(
            lambda: get_json(self.base + "/overview", timeout=2)["taskmanagers"] >= 2,  # type: ignore[index]
            120,
            "the flott session cluster (2 TaskManagers)",
            0.05,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        if self.sampler is not None:
            self.sampler.__exit__()
        stop(self.proc, timeout=30, group=True)

    def reset_peaks(self) -> None:
        """Forget the peaks so far (a shared cluster: each run reports its own)."""
        assert self.sampler is not None
        self.sampler.peaks.clear()

    def peak_rss(self, label: str) -> int:
        assert self.sampler is not None
        return max(self.sampler.by_label().get(label, [0]))

    # -- jobs ------------------------------------------------------------------------------------
    def submit(self, params: dict[str, Any]) -> str:
        proc = subprocess.run(
            [*FLOTT, "run", "-m", f"127.0.0.1:{self.rest_port}", "-d", str(self.workdir / "job.py"),
             json.dumps(params)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=str(REPO),
        )  # fmt: skip
        m = re.search(r"JobID ([0-9a-f]{32})", proc.stdout + proc.stderr)
        if proc.returncode != 0 or not m:
            raise RuntimeError(f"flott run failed ({proc.returncode}): {(proc.stdout + proc.stderr)[-1500:]}")
        return m.group(1)

    def job(self, job_id: str) -> dict[str, Any]:
        return get_json(f"{self.base}/jobs/{job_id}")  # type: ignore[return-value]

    def checkpoints(self, job_id: str) -> dict[str, Any]:
        return get_json(f"{self.base}/jobs/{job_id}/checkpoints")  # type: ignore[return-value]

    def wait_state(self, job_id: str, states: tuple[str, ...], timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            d = self.job(job_id)
            if d["state"] in states:
                return d
            if d["state"] in ("FAILED", "CANCELED", "FINISHED"):
                raise RuntimeError(f"job {job_id} ended {d['state']} (see {self.workdir}/jobmanager.log)")
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} not {states} after {timeout:g} s (it is {d['state']})")
            time.sleep(0.1)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            self.base + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            text = r.read()
        return json.loads(text) if text else None

    def cancel(self, job_id: str) -> None:
        try:
            self.request("PATCH", f"/jobs/{job_id}?mode=cancel")
            self.wait_state(job_id, ("CANCELED",), 60)
        except Exception as e:
            log(f"cancel of {job_id}: {e}")


# -- 1. throughput overhead ------------------------------------------------------------------------


def steady_rate(samples: list[list[tuple[float, int]]], total: int) -> tuple[float, float, float]:
    """(records/s between 10% and 90% of ``total`` at the sinks, t10, t90) from per-subtask samples."""
    events = sorted((t, i, c) for i, s in enumerate(samples) for t, c in s)
    current = [0] * len(samples)
    t10 = t90 = None
    c10 = c90 = 0
    for t, i, c in events:
        current[i] = c
        seen = sum(current)
        if t10 is None and seen >= 0.1 * total:
            t10, c10 = t, seen
        if t90 is None and seen >= 0.9 * total:
            t90, c90 = t, seen
            break
    if t10 is None or t90 is None or t90 <= t10:
        raise RuntimeError(f"not enough sink samples to find a steady window ({len(events)} samples)")
    return (c90 - c10) / (t90 - t10), t10, t90


@dataclass
class ThroughputRun:
    interval_ms: int
    rate: float
    job_s: float
    completed: int = 0
    failed: int = 0
    failure: str = ""
    e2e_p50_ms: float = 0.0
    e2e_max_ms: float = 0.0
    state_size: int = 0


def run_throughput(session: Session, records: int, keys: int, interval_ms: int, tag: str) -> ThroughputRun:
    work = session.workdir / tag
    shutil.rmtree(work, ignore_errors=True)
    progress = work / "progress"
    progress.mkdir(parents=True)
    params = {
        "mode": "throughput",
        "records": records,
        "keys": keys,
        "backend": "hashmap",
        "interval_ms": interval_ms,
        "checkpoint_dir": (work / "chk").as_uri(),
        "local_dir": str(work / "rocksdb"),
        "progress_dir": str(progress),
    }
    job_id = session.submit(params)
    d = session.wait_state(job_id, ("FINISHED",), 900)
    samples = []
    for i in range(2):
        f = progress / f"sink-{i}.json"
        wait_until(f.exists, 30, f"the sink's samples {f}")
        samples.append([(float(t), int(c)) for t, c in json.loads(f.read_text())])
    arrived = sum(s[-1][1] for s in samples)
    if arrived != records:
        raise RuntimeError(f"the sinks saw {arrived} records, expected {records}")
    rate, _, _ = steady_rate(samples, records)
    ts = d["timestamps"]
    run = ThroughputRun(interval_ms, rate, (ts["FINISHED"] - ts["RUNNING"]) / 1000)
    if interval_ms:
        stats = session.checkpoints(job_id)
        e2e = stats["summary"]["end_to_end_duration"]
        run.completed = stats["counts"]["completed"]
        run.failed = stats["counts"]["failed"]
        latest = stats.get("latest") or {}
        if run.failed and latest.get("failed"):
            run.failure = str(latest["failed"].get("failure_message", ""))[:200]
        run.e2e_p50_ms, run.e2e_max_ms = float(e2e["p50"]), float(e2e["max"])
        run.state_size = int((latest.get("completed") or {}).get("state_size", 0))
    shutil.rmtree(work, ignore_errors=True)
    return run


def variant_name(interval_ms: int) -> str:
    return f"checkpoint every {interval_ms / 1000:g} s" if interval_ms else "no checkpoints"


def cluster(shared: Session | None, workdir: Path) -> contextlib.AbstractContextManager[Session]:
    """The shared cluster (--quick), else a new one in ``workdir``."""
    return contextlib.nullcontext(shared) if shared is not None else Session(workdir)


def throughput_section(args: argparse.Namespace, tmp: Path, shared: Session | None) -> str:
    variants = [0, *args.intervals]
    runs: list[dict[int, ThroughputRun]] = []
    started = time.monotonic()
    with cluster(shared, tmp / "throughput") as session:
        if not args.quick:
            log("throughput: a warm-up run (not counted)")
            run_throughput(session, args.records // 10, args.throughput_keys, 1000, "warm-up")
        for r in range(args.rounds):
            order = variants[r % len(variants) :] + variants[: r % len(variants)]
            got: dict[int, ThroughputRun] = {}
            for interval in order:
                log(f"throughput round {r + 1}/{args.rounds}: {variant_name(interval)}")
                got[interval] = x = run_throughput(
                    session, args.records, args.throughput_keys, interval, f"r{r}-{interval}"
                )
                log(f"  {x.rate:,.0f} records/s (steady), job {x.job_s:.2f} s, {x.completed} checkpoints")
            runs.append(got)
    took = time.monotonic() - started
    rows = []
    notes = []
    for interval in variants:
        mine = [g[interval] for g in runs]
        med, lo, hi = summary([x.rate for x in mine])
        job_med, job_range = secs([x.job_s for x in mine])
        ratio = ratio_cell([g[interval].rate / g[0].rate for g in runs]) if interval else "1.00×"
        job_ratio = ratio_cell([g[interval].job_s / g[0].job_s for g in runs]) if interval else "1.00×"
        if interval:
            cps = f"{summary([float(x.completed) for x in mine])[0]:.0f}"
            if any(x.failed for x in mine):
                cps += f" ({sum(x.failed for x in mine)} failed in all)"
                notes += [
                    f"{variant_name(interval)}: a failed checkpoint: {x.failure}" for x in mine if x.failure
                ]
            e2e = (
                f"{summary([x.e2e_p50_ms for x in mine])[0]:,.0f} / "
                f"{summary([x.e2e_max_ms for x in mine])[0]:,.0f}"
            )
            size = mb(summary([float(x.state_size) for x in mine])[0])
        else:
            cps, e2e, size = "–", "–", "–"
        rows.append([
            variant_name(interval),
            fmt_num(med), f"{fmt_num(lo)} / {fmt_num(hi)}", ratio,
            job_med, job_range, job_ratio, cps, e2e, size,
        ])  # fmt: skip
    measure = (
        f"checkpoint every 1 s vs none: steady records/s (keyed running count, STREAMING p=2, "
        f"{args.records:,} records)"
    )
    if 1000 in variants:
        add_summary(
            args.summary,
            "ck_every_1s",
            measure,
            f"{fmt_num(summary([g[1000].rate for g in runs])[0])} records/s",
            f"{fmt_num(summary([g[0].rate for g in runs])[0])} records/s (no checkpoints)",
            [g[1000].rate / g[0].rate for g in runs],
        )
    else:
        add_summary(args.summary, "ck_every_1s", measure, note="--intervals has no 1000 ms")
    out = [
        f"\n### Checkpointing overhead: keyed running count, STREAMING, p=2, {args.records:,} records, "
        f"{args.throughput_keys:,} keys ({args.rounds} interleaved round(s), {took:.0f} s in all)\n",
        markdown_table(
            [
                "run",
                "records/s steady (median)",
                "min / max",
                "vs none (throughput)",
                "job s (median)",
                "min / max s",
                "vs none (job time)",
                "checkpoints completed (median)",
                "checkpoint e2e ms p50 / max (median)",
                "checkpoint size",
            ],
            rows,
        ),
        "\nSteady records/s: at the sink, between the moments 10% and 90% of all records had arrived "
        "(sampled every 50 ms per sink subtask). Job s: the job's RUNNING → FINISHED timestamps, "
        "deployment included, and with checkpoints the end of input: as in Flink, sources finish only "
        "once a checkpoint taken after their last record completed, up to one interval later. Ratios "
        "are taken within a round. "
        "Checkpoint durations: `GET /jobs/:id/checkpoints` summary (end to end: trigger → last "
        "acknowledgement). The order of the runs rotates from round to round"
        + (
            "." if args.quick else "; one uncounted warm-up job (with checkpoints) runs first on the cluster."
        ),
    ]
    if notes:
        out.append("\n" + "\n".join(f"- {n}" for n in notes))
    return "\n".join(out)


# -- 2. ~1 GB of keyed state -----------------------------------------------------------------------


@dataclass
class StateRun:
    backend: str
    fill_s: float = 0.0
    checkpoint_s: float = 0.0
    checkpoint_size: int = 0
    checkpoints_before: int = 0
    savepoint_wall_s: float = 0.0
    savepoint_e2e_s: float = 0.0
    savepoint_size: int = 0
    savepoint_state_size: int = 0
    rocksdb_bytes: int = 0
    rss_te: int = 0
    overlapped: bool = False
    notes: list[str] = field(default_factory=list)


def run_state(
    args: argparse.Namespace, tmp: Path, backend: str, tag: str, shared: Session | None
) -> StateRun:
    work = tmp / tag
    shutil.rmtree(work, ignore_errors=True)
    markers, local = work / "markers", work / "rocksdb"
    markers.mkdir(parents=True)
    local.mkdir()
    run = StateRun(backend)
    expected = args.keys * args.value_bytes
    with cluster(shared, work / "cluster") as session:
        if shared is not None:
            session.reset_peaks()
        params = {
            "mode": "state",
            "keys": args.keys,
            "value_bytes": args.value_bytes,
            "backend": backend,
            "interval_ms": args.interval_ms,
            "min_pause_ms": args.min_pause_ms,
            "checkpoint_dir": (work / "chk").as_uri(),
            "local_dir": str(local),
            "marker_dir": str(markers),
        }
        job_id = session.submit(params)
        d = session.wait_state(job_id, ("RUNNING",), 120)
        running_ms = d["timestamps"]["RUNNING"]
        files = [markers / f"filled-{i}" for i in range(2)]
        wait_until(lambda: all(f.exists() for f in files), args.fill_timeout, "the fill (sources done)", 0.05)
        filled = max(float(f.read_text()) for f in files)
        run.fill_s = filled - running_ms / 1000

        def full_checkpoint() -> dict[str, Any] | None:
            stats = session.checkpoints(job_id)
            for h in stats.get("history", []):
                if (
                    h.get("checkpoint_type") == "CHECKPOINT"
                    and h.get("status") == "COMPLETED"
                    and h["trigger_timestamp"] >= filled * 1000
                ):
                    return dict(h)
            return None

        wait_until(
            full_checkpoint, args.interval_ms / 1000 + args.fill_timeout, "a checkpoint after the fill", 0.2
        )
        cp = full_checkpoint()
        assert cp is not None
        run.checkpoint_s = cp["end_to_end_duration"] / 1000
        run.checkpoint_size = int(cp["state_size"])
        run.checkpoints_before = int(cp["id"]) - 1
        if run.checkpoint_size < expected:
            run.notes.append(f"checkpoint {cp['id']} holds {run.checkpoint_size:,} B < {expected:,} B")
        run.rocksdb_bytes = du(local)

        run.savepoint_wall_s, op = trigger_savepoint(
            session, job_id, work / "savepoints", args.fill_timeout, 0.05
        )
        location = str(op["location"]).removeprefix("file://")
        run.savepoint_size = du(Path(location))
        stats = session.checkpoints(job_id)
        sp = (stats.get("latest") or {}).get("savepoint") or {}
        run.savepoint_e2e_s = sp.get("end_to_end_duration", 0) / 1000
        run.savepoint_state_size = int(sp.get("state_size", 0))
        sp_start, sp_end = sp.get("trigger_timestamp", 0), sp.get("latest_ack_timestamp", 0)
        run.overlapped = any(
            h.get("checkpoint_type") == "CHECKPOINT" and sp_start <= h["trigger_timestamp"] <= sp_end
            for h in stats.get("history", [])
        )
        session.cancel(job_id)
        run.rss_te = session.peak_rss("TaskExecutor")
    shutil.rmtree(work, ignore_errors=True)
    return run


# -- 3. a savepoint while a slow function is chained to the source ------------------------------


def trigger_savepoint(
    session: Session, job_id: str, target: Path, timeout: float, poll_s: float
) -> tuple[float, dict[str, Any]]:
    """``POST /jobs/:id/savepoints``, then poll its status: (trigger -> COMPLETED seen s, the operation)."""
    t0 = time.perf_counter()
    trigger = session.request(
        "POST", f"/jobs/{job_id}/savepoints", {"target-directory": str(target), "cancel-job": False}
    )["request-id"]
    while True:
        status = session.request("GET", f"/jobs/{job_id}/savepoints/{trigger}")
        if status["status"]["id"] == "COMPLETED":
            break
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("the savepoint did not complete")
        time.sleep(poll_s)
    wall = time.perf_counter() - t0
    op: dict[str, Any] = status["operation"]
    if op.get("failure-cause"):
        raise RuntimeError(f"savepoint failed: {op['failure-cause']}")
    return wall, op


def slow_section(args: argparse.Namespace, tmp: Path, shared: Session | None) -> str:
    """Savepoints of a job whose source is chained with a map taking ``--slow-record-ms`` per record."""
    walls: list[float] = []
    e2es: list[float] = []
    started = time.monotonic()
    for r in range(args.rounds):
        log(f"slow-map savepoint round {r + 1}/{args.rounds}")
        work = tmp / f"slow-{r}"
        with cluster(shared, work / "cluster") as session:
            params = {
                "mode": "slow",
                "record_ms": args.slow_record_ms,
                "backend": "hashmap",
                "interval_ms": 0,
                "checkpoint_dir": (work / "chk").as_uri(),
                "local_dir": str(work / "rocksdb"),
            }
            job_id = session.submit(params)
            session.wait_state(job_id, ("RUNNING",), 120)
            time.sleep(1.0)  # records are flowing through the slow map
            for i in range(args.slow_savepoints):
                wall, _ = trigger_savepoint(session, job_id, work / f"sp-{i}", args.fill_timeout, 0.01)
                sp = (session.checkpoints(job_id).get("latest") or {}).get("savepoint") or {}
                walls.append(wall)
                e2es.append(sp.get("end_to_end_duration", 0) / 1000)
            session.cancel(job_id)
        shutil.rmtree(work, ignore_errors=True)
    took = time.monotonic() - started
    w_med, w_range = secs(walls, 3)
    e_med, e_range = secs(e2es, 3)
    rows = [
        [
            f"map taking {args.slow_record_ms} ms per record, chained to the source (p=2)",
            str(len(walls)),
            w_med,
            w_range,
            e_med,
            e_range,
        ]
    ]
    add_summary(
        args.summary,
        "ck_slow_map",
        f"savepoint with a {args.slow_record_ms} ms-per-record map chained to the source, "
        "trigger → COMPLETED (target ≤ 0.2 s)",
        f"{w_med} s (cluster's end-to-end {e_med} s)",
    )
    table = markdown_table(
        [
            "job",
            "savepoints",
            "trigger → COMPLETED seen s (median)",
            "min / max s",
            "cluster's end-to-end s (median)",
            "min / max s",
        ],
        rows,
    )
    return (
        f"\n### Savepoint while a slow function is chained to the source ({args.rounds} round(s), "
        f"{took:.0f} s in all)\n\n{table}\n\n"
        "An unbounded source chained with a map that sleeps per record, into a counting sink; no "
        "periodic checkpoints. The source task sizes its batches to ~10 ms of the chain's work "
        "(flott/runtime/tasks/source_batch_size.py), so the trigger waits for the record being "
        "processed, not for a batch of them. Trigger → COMPLETED is polled every 10 ms.\n"
    )


def state_section(args: argparse.Namespace, tmp: Path, backends: list[str], shared: Session | None) -> str:
    runs: list[dict[str, StateRun]] = []
    started = time.monotonic()
    for r in range(args.rounds):
        order = backends if r % 2 == 0 else list(reversed(backends))
        got: dict[str, StateRun] = {}
        for b in order:
            log(f"keyed state round {r + 1}/{args.rounds}: {b}")
            got[b] = run_state(args, tmp, b, f"state-r{r}-{b}", shared)
            x = got[b]
            log(
                f"  fill {x.fill_s:.1f} s, checkpoint {x.checkpoint_s:.2f} s ({mb(x.checkpoint_size)}), "
                f"savepoint {x.savepoint_wall_s:.2f} s ({mb(x.savepoint_size)}), TE peak "
                f"{x.rss_te / 2**20:.0f} MiB"
            )
        runs.append(got)
    took = time.monotonic() - started
    size = args.keys * args.value_bytes
    rows = []
    for b in backends:
        mine = [g[b] for g in runs]
        cp_med, cp_range = secs([x.checkpoint_s for x in mine])
        sp_med, sp_range = secs([x.savepoint_wall_s for x in mine])
        fill_med, _ = secs([x.fill_s for x in mine], 1)
        sp_size = summary([float(x.savepoint_size) for x in mine])[0]
        rate = sp_size / summary([x.savepoint_wall_s for x in mine])[0]
        if b == backends[0]:
            vs = "1.00×"
        else:
            vs = ratio_cell([g[b].savepoint_wall_s / g[backends[0]].savepoint_wall_s for g in runs])
        rows.append([
            b,
            f"{fill_med} ({fmt_num(args.keys / summary([x.fill_s for x in mine])[0])} keys/s)",
            cp_med, cp_range, sp_med, sp_range, f"{rate / 1e6:,.0f} MB/s", vs,
            mb(sp_size), mb(summary([float(x.checkpoint_size) for x in mine])[0]),
            mb(summary([float(x.rocksdb_bytes) for x in mine])[0]) if b == "rocksdb" else "–",
            f"{summary([float(x.rss_te) for x in mine])[0] / 2**20:,.0f}",
        ])  # fmt: skip
    times = []
    for b in backends:
        mine = [g[b] for g in runs]
        wall = summary([x.savepoint_wall_s for x in mine])[0]
        rate = summary([float(x.savepoint_size) for x in mine])[0] / wall
        times.append(f"{wall:.2f} s {b} ({rate / 1e6:,.0f} MB/s)")
    add_summary(
        args.summary,
        "ck_savepoint",
        f"savepoint of {mb(size)} keyed state (p=2), trigger → COMPLETED",
        "; ".join(times),
    )
    out = [
        f"\n### Checkpoint and savepoint of {mb(size)} of keyed state ({args.keys:,} keys × "
        f"{args.value_bytes:,} random bytes in a ValueState, p=2; {args.rounds} interleaved round(s), "
        f"{took:.0f} s in all)\n",
        markdown_table(
            [
                "state backend",
                "fill s (median)",
                "periodic checkpoint s (median)",
                "min / max s",
                "savepoint trigger → COMPLETED s (median)",
                "min / max s",
                "savepoint MB/s",
                "savepoint time vs " + backends[0],
                "savepoint size on disk",
                "checkpoint state_size",
                "RocksDB files on disk",
                "peak RSS per TaskExecutor MiB (median)",
            ],
            rows,
        ),
        "\nFill: job RUNNING → both sources had emitted their last key (a few buffers of records may "
        "still be in flight). Periodic checkpoint: end-to-end duration (trigger → last acknowledgement, "
        "`/jobs/:id/checkpoints`) of the first periodic checkpoint triggered after the fill, i.e. one "
        f"holding all the state (interval {args.interval_ms / 1000:g} s, min pause "
        f"{args.min_pause_ms / 1000:g} s). Savepoint: wall time from "
        "`POST /jobs/:id/savepoints` to the status URL answering COMPLETED (polled every 50 ms), "
        "then the size of the savepoint directory's files. "
        + (
            "--quick: one cluster for all runs (peak RSS includes what earlier jobs left behind)."
            if shared is not None
            else "Each run on a fresh cluster."
        ),
    ]
    notes = [n for g in runs for x in g.values() for n in x.notes]
    overlapped = sum(1 for g in runs for x in g.values() if x.overlapped)
    if overlapped:
        notes.append(f"{overlapped} savepoint(s) had a periodic checkpoint triggered while they ran.")
    if notes:
        out.append("\n" + "\n".join(f"- {n}" for n in notes))
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="300k records, 50 MB of state, 1 round (< 1 min)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--records", type=int, default=6_000_000, help="records of the throughput job")
    ap.add_argument("--throughput-keys", type=int, default=100_000, help="keys of the throughput job")
    ap.add_argument("--keys", type=int, default=1_000_000, help="keys of the keyed-state job")
    ap.add_argument("--value-bytes", type=int, default=1000, help="bytes per key in the keyed-state job")
    ap.add_argument("--interval-ms", type=int, default=30_000, help="checkpoint interval, keyed-state job")
    ap.add_argument(
        "--min-pause-ms", type=int, default=60_000, help="min pause between checkpoints, keyed-state job"
    )
    ap.add_argument(
        "--intervals",
        default="1000,10000",
        help="checkpoint intervals (ms) compared with none, throughput job",
    )
    ap.add_argument("--fill-timeout", type=float, default=900.0)
    ap.add_argument("--slow-record-ms", type=int, default=50, help="the slow map's time per record")
    ap.add_argument("--slow-savepoints", type=int, default=3, help="savepoints per round, slow-map job")
    ap.add_argument("--backends", default="hashmap,rocksdb")
    ap.add_argument(
        "--only", default="throughput,state,slow", help="sections: throughput,state,slow,async,incremental"
    )
    ap.add_argument("--phase-mb", type=int, default=200, help="MB of state, async/incremental sections")
    ap.add_argument("--phase-rounds", type=int, default=3, help="rounds, async section")
    ap.add_argument("--phase-intervals", type=int, default=8, help="1 %% change intervals, incremental")
    ap.add_argument("--no-peers", action="store_true", help="accepted for bench/run; no peers run here")
    ap.add_argument("--summary", help="append this benchmark's summary-table rows to this file (JSON lines)")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.records, args.keys = 1, 300_000, 50_000
        args.interval_ms, args.min_pause_ms, args.intervals = 2_000, 4_000, "1000"
        args.fill_timeout = 120.0
        args.slow_savepoints = 2
        args.phase_mb, args.phase_rounds, args.phase_intervals = 20, 1, 2
    args.intervals = [int(x) for x in args.intervals.split(",") if x.strip()]
    notes = []
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if "rocksdb" in backends:
        ok, why = rocksdb_available()
        if not ok:
            backends.remove("rocksdb")
            notes.append(f"RocksDB backend not measured: it does not import here ({why}).")
    sections = {s.strip() for s in args.only.split(",")}
    notes.append(f"Load average (1/5/15 min) at the start: {loadavg()} on {os.cpu_count()} cores.")
    tmp = Path(tempfile.mkdtemp(prefix="flott-bench-chk-"))
    parts = []
    try:
        with contextlib.ExitStack() as stack:
            shared = stack.enter_context(Session(tmp / "cluster")) if args.quick else None
            if "throughput" in sections:
                parts.append(throughput_section(args, tmp, shared))
            if "state" in sections and backends:
                parts.append(state_section(args, tmp, backends, shared))
            if "slow" in sections:
                parts.append(slow_section(args, tmp, shared))
            if "async" in sections:
                parts.append(snapshot_phases.async_section(args.phase_mb, args.phase_rounds, tmp / "phases"))
            if "incremental" in sections and "rocksdb" in backends:
                for style in ("LEVEL", "UNIVERSAL"):
                    inc = snapshot_phases.incremental_section(
                        args.phase_mb, args.phase_intervals, tmp / f"inc-{style}", style
                    )
                    parts.append(inc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    notes.append(f"Load average at the end: {loadavg()}.")
    print("\n".join(parts))
    print()
    for n in notes:
        print(f"- {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
