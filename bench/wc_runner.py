"""One word-count run of one system, in its own process (started by bench/word_count.py).

    python bench/wc_runner.py SYSTEM --input FILE --out DIR [--parallelism N]

SYSTEM is ``bare`` (the per-record loop; N processes splitting the file by byte
ranges, dicts merged with the same ``add``), ``bare-streaming`` (the same loop in
one process writing every running count as a sink line: STREAMING's yardstick),
``flott`` (BATCH), ``flott-streaming`` (STREAMING, every update to the FileSink), both with
the pair's declared ``output_type`` (``flott-untyped``, ``flott-streaming-untyped``: without),
``bytewax`` or ``pyflink`` (the last two from bench/.venv-peers). Every system calls the same
functions from wc_functions.py. The output goes to DIR (checked by the caller);
the last stdout line is JSON: {"elapsed": seconds from job start to job end}.

What "elapsed" covers: bare: reading, counting and merging (with N > 1 also
forking the workers); flott: ``env.execute()`` (starts the embedded cluster's
TaskExecutor processes); bytewax: spawning the N worker processes of
``bytewax.testing.cluster_main`` until all exited; pyflink: ``env.execute()``
(starts the local MiniCluster in the already running JVM gateway, and the
Python UDF workers).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import wc_functions  # noqa: E402
from wc_functions import (  # noqa: E402
    add,
    bare_count,
    bare_streaming_count,
    key,
    line_ranges,
    pair,
    split,
)


def write_counts(out: Path, name: str, state: dict[str, tuple[str, int]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / name).open("w") as f:
        f.writelines(f"{k}\t{v[1]}\n" for k, v in state.items())


# --- bare -------------------------------------------------------------------------------------
def _bare_part(arg: tuple[str, int, int]) -> dict[str, tuple[str, int]]:
    return bare_count(*arg)


def run_bare(src: Path, out: Path, parallelism: int) -> float:
    start = time.perf_counter()
    if parallelism == 1:
        state = bare_count(str(src))
    else:
        import multiprocessing

        ranges = [(str(src), a, b) for a, b in line_ranges(src, parallelism)]
        with multiprocessing.get_context("fork").Pool(parallelism) as pool:
            parts = pool.map(_bare_part, ranges, chunksize=1)
        state = parts[0]
        for part in parts[1:]:
            for k, v in part.items():
                old = state.get(k)
                state[k] = v if old is None else add(old, v)
    elapsed = time.perf_counter() - start
    write_counts(out, "part-0", state)
    return elapsed


def run_bare_streaming(src: Path, out: Path, parallelism: int) -> float:
    """The STREAMING yardstick: one process writing every running count (parallelism ignored)."""
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    bare_streaming_count(str(src), str(out / "part-0"))
    return time.perf_counter() - start


# --- flott ------------------------------------------------------------------------------------
def run_flott_streaming(src: Path, out: Path, parallelism: int) -> float:
    return run_flott(src, out, parallelism, streaming=True)


def run_flott_untyped(src: Path, out: Path, parallelism: int) -> float:
    return run_flott(src, out, parallelism, typed=False)


def run_flott_streaming_untyped(src: Path, out: Path, parallelism: int) -> float:
    return run_flott(src, out, parallelism, streaming=True, typed=False)


def run_flott(src: Path, out: Path, parallelism: int, streaming: bool = False, typed: bool = True) -> float:
    import cloudpickle

    from flott.common import Encoder, Types, WatermarkStrategy
    from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
    from flott.datastream.connectors.file_system import FileSink, FileSource, StreamFormat

    # The functions travel by value, as they would if defined in the user's script.
    cloudpickle.register_pickle_by_value(wc_functions)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    if streaming:
        # Every running count goes to the sink, as in PyFlink's STREAMING mode; the part
        # files become visible at the end of the bounded input without checkpoints.
        env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    else:
        env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    ds = env.from_source(
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(src))
        .process_static_file_set()
        .build(),
        WatermarkStrategy.no_watermarks(),
        "lines",
    )
    (
        ds.flat_map(split)
        .map(pair, output_type=Types.TUPLE([Types.STRING(), Types.INT()]) if typed else None)
        .key_by(key)
        .reduce(add)
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
    )
    start = time.perf_counter()
    env.execute(f"bench_word_count_{'streaming' if streaming else 'batch'}_p{parallelism}")
    return time.perf_counter() - start


# --- bytewax ----------------------------------------------------------------------------------
def bytewax_flow(src_dir: Path, out: Path):  # type: ignore[no-untyped-def]
    import bytewax.operators as op
    from bytewax.connectors.files import DirSource
    from bytewax.dataflow import Dataflow
    from bytewax.outputs import DynamicSink, StatelessSinkPartition

    class _Part(StatelessSinkPartition):  # type: ignore[type-arg]
        def __init__(self, path: Path) -> None:
            self._f = path.open("w")

        def write_batch(self, items):  # type: ignore[no-untyped-def]
            self._f.writelines(f"{k}\t{v[1]}\n" for k, v in items)

        def close(self) -> None:
            self._f.close()

    class PartFileSink(DynamicSink):  # type: ignore[type-arg]
        def build(self, step_id, worker_index, worker_count):  # type: ignore[no-untyped-def]
            out.mkdir(parents=True, exist_ok=True)
            return _Part(out / f"part-{worker_index}")

    flow = Dataflow("bench_word_count")
    lines = op.input("lines", flow, DirSource(src_dir))
    words = op.flat_map("split", lines, split)
    pairs = op.map("pair", words, pair)
    keyed = op.key_on("key", pairs, key)
    counts = op.reduce_final("reduce", keyed, add)
    op.output("out", counts, PartFileSink())
    return flow


def run_bytewax(src: Path, out: Path, parallelism: int) -> float:
    # DirSource's unit of parallelism is a file: the input is cut into 2 files at line
    # ends (the same files for 1 and 2 processes).
    src_dir = src.parent / (src.stem + "-parts")
    if not src_dir.exists():
        wc_functions.split_into_files(src, src_dir, 2)
    import socket

    ports = []
    socks = []
    for _ in range(parallelism):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        ports.append(s.getsockname()[1])
        socks.append(s)
    for s in socks:
        s.close()
    addresses = ";".join(f"127.0.0.1:{p}" for p in ports)
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "bytewax-worker",
                "--input",
                str(src_dir),
                "--out",
                str(out),
                "--proc-id",
                str(i),
                "--addresses",
                addresses,
            ]
        )
        for i in range(parallelism)
    ]
    try:
        codes = [p.wait(timeout=3600) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    elapsed = time.perf_counter() - start
    if any(codes):
        raise RuntimeError(f"bytewax workers exited with {codes}")
    return elapsed


def bytewax_worker(src_dir: Path, out: Path, proc_id: int, addresses: str) -> None:
    from bytewax.testing import cluster_main

    cluster_main(bytewax_flow(src_dir, out), addresses.split(";"), proc_id, worker_count_per_proc=1)


# --- pyflink ----------------------------------------------------------------------------------
def run_pyflink(src: Path, out: Path, parallelism: int) -> float:
    from pyflink.common import Encoder, Types, WatermarkStrategy
    from pyflink.common.configuration import Configuration
    from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
    from pyflink.datastream.connectors.file_system import FileSink, FileSource, StreamFormat

    config = Configuration()
    config.set_string("python.executable", sys.executable)
    config.set_string("taskmanager.memory.process.size", "1024m")  # ignored by MiniCluster
    config.set_string("rest.bind-port", "0")
    # Python keyed state is cached in the UDF worker; the default (1000 entries) is below
    # the 10,000-word vocabulary and makes every miss a round trip to the JVM.
    config.set_string("python.state.cache-size", os.environ.get("BENCH_PYFLINK_STATE_CACHE", "20000"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(parallelism)
    if os.environ.get("BENCH_PYFLINK_MODE") == "streaming":
        env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
        env.enable_checkpointing(1000)  # FileSink commits on checkpoints (the last one at the end)
    else:
        env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.add_python_file(str(HERE / "wc_functions.py"))
    ds = env.from_source(
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(src))
        .process_static_file_set()
        .build(),
        WatermarkStrategy.no_watermarks(),
        "lines",
    )
    (
        ds.flat_map(split, output_type=Types.STRING())
        .map(pair, output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(key, key_type=Types.STRING())
        .reduce(add)
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
    )
    start = time.perf_counter()
    env.execute(f"bench_word_count_p{parallelism}")
    return time.perf_counter() - start


RUNNERS = {
    "bare": run_bare,
    "bare-streaming": run_bare_streaming,
    "flott": run_flott,
    "flott-streaming": run_flott_streaming,
    "flott-untyped": run_flott_untyped,
    "flott-streaming-untyped": run_flott_streaming_untyped,
    "bytewax": run_bytewax,
    "pyflink": run_pyflink,
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("system", choices=[*RUNNERS, "bytewax-worker"])
    ap.add_argument("--input", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--parallelism", type=int, default=1)
    ap.add_argument("--proc-id", type=int, default=0)
    ap.add_argument("--addresses", default="")
    args = ap.parse_args()
    if args.system == "bytewax-worker":
        bytewax_worker(args.input, args.out, args.proc_id, args.addresses)
        return 0
    elapsed = RUNNERS[args.system](args.input, args.out, args.parallelism)
    sys.stdout.flush()
    os.write(1, (json.dumps({"elapsed": elapsed}) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
