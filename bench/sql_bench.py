"""SQL in batch mode: a tumbling-window aggregation and a join, on flott, PyFlink 2.3 and DuckDB.

    python bench/sql_bench.py [--quick] [--records 2000000] [--keys 100] [--parallelism 2]
                              [--rounds 3] [--no-peers] [--only flott,pyflink,duckdb]

Every system reads the same generated CSV files (``--records`` bids in 2 files, written
once before the runs, their writing not timed) and a 10-row ``categories`` file:

    bids(auction BIGINT, price BIGINT, ts TIMESTAMP(3))  -- auction: one of --keys keys;
                                                          -- 10 bids per ms of event time
    auctions(id BIGINT, category STRING)                  -- one row per key, 10 categories

and answers two queries:

- **window**: ``SELECT auction, window_start, COUNT(*), SUM(price) FROM TABLE(TUMBLE(TABLE
  bids, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY auction, window_start, window_end``;
  DuckDB has no window table-valued functions, so it runs the same grouping with
  ``time_bucket(INTERVAL '1 second', ts)`` (the query text is in ``DUCKDB_WINDOW``);
- **join**: ``SELECT a.category, COUNT(*), SUM(b.price) FROM bids b JOIN auctions a ON
  b.auction = a.id GROUP BY a.category``, the same text on every system.

Runners, each run in a process of its own (this file, ``--run SYSTEM``), one after the
other in every round:

- bare loop: the same results computed in a Python dict over the generated records
  (CPU time, the records already in memory: the per-core limit of plain Python);
- DuckDB (the single-machine yardstick): a fresh in-memory database; the bids are a view
  over ``read_csv`` of the files, so every query parses the CSV as the others do;
- PyFlink 2.3 (``TableEnvironment`` in batch mode, a local MiniCluster per job,
  ``parallelism.default`` = ``--parallelism``; filesystem csv tables), from bench/.venv-peers;
- flott, the same program with ``flott.table`` for ``pyflink.table`` (skipped, with a
  note, while ``flott.table`` cannot be imported).

Times: for Flink-like systems, ``execute_sql(query).collect()`` until the last row, which
includes a job's fixed cost (PyFlink starts a MiniCluster for each job); that fixed cost is
shown on its own as the time of a query over a 1-row table run first in the same process.
The environment (and PyFlink's JVM gateway) is created before any timing. DuckDB:
``execute(query).fetchall()``. Every run's rows are checked against the bare loop's before
its time counts.

``--quick``: 100,000 records, 1 round, no PyFlink rows unless ``--only pyflink`` asks for
them (its JVM and MiniCluster starts alone take 15-60 s on this 2-core machine).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# This checkout's flott, for this process and the processes it starts.
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)

RECORDS_PER_MS = 10
CATEGORIES = 10
FILES = 2
WINDOW_MS = 1000
EPOCH = datetime.datetime(2024, 1, 1)
RUN_TIMEOUT_S = 1800

FLINK_WINDOW = """
    SELECT auction, window_start, COUNT(*) AS bids, SUM(price) AS total
    FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' SECOND))
    GROUP BY auction, window_start, window_end
"""
DUCKDB_WINDOW = """
    SELECT auction, time_bucket(INTERVAL '1 second', ts) AS window_start, COUNT(*) AS bids,
           SUM(price) AS total
    FROM bids
    GROUP BY auction, window_start
"""
JOIN = """
    SELECT a.category, COUNT(*) AS bids, SUM(b.price) AS total
    FROM bids AS b JOIN auctions AS a ON b.auction = a.id
    GROUP BY a.category
"""

# (auction, window start in ms since EPOCH) -> [count, sum]; category -> [count, sum]
Windows = dict[tuple[int, int], tuple[int, int]]
Joined = dict[str, tuple[int, int]]


def record(i: int, keys: int) -> tuple[int, int, int]:
    """The i-th bid: (auction, price, event time in ms since EPOCH)."""
    return (i * 7919) % keys, i % 997 + 1, i // RECORDS_PER_MS


def category(auction: int) -> str:
    return f"cat-{auction % CATEGORIES}"


def write_input(directory: Path, records: int, keys: int) -> tuple[Path, Path]:
    """The bids as FILES csv files under ``bids/`` and the auctions under ``auctions/``."""
    bids, auctions = directory / "bids", directory / "auctions"
    bids.mkdir(parents=True)
    auctions.mkdir(parents=True)
    per_file = -(-records // FILES)
    for f in range(FILES):
        with open(bids / f"part-{f}.csv", "w") as out:
            for i in range(f * per_file, min(records, (f + 1) * per_file)):
                auction, price, ms = record(i, keys)
                stamp = EPOCH + datetime.timedelta(milliseconds=ms)
                out.write(f"{auction},{price},{stamp:%Y-%m-%d %H:%M:%S}.{ms % 1000:03d}\n")
    with open(auctions / "part-0.csv", "w") as out:
        out.writelines(f"{k},{category(k)}\n" for k in range(keys))
    return bids, auctions


def bare_loop(records: int, keys: int) -> tuple[float, Windows, Joined]:
    """Both queries' results in dicts; CPU seconds (the records generated in memory first)."""
    rows = [record(i, keys) for i in range(records)]
    start = time.process_time()
    windows: defaultdict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    joined: defaultdict[str, list[int]] = defaultdict(lambda: [0, 0])
    names = {k: category(k) for k in range(keys)}
    for auction, price, ms in rows:
        w = windows[(auction, ms - ms % WINDOW_MS)]
        w[0] += 1
        w[1] += price
        j = joined[names[auction]]
        j[0] += 1
        j[1] += price
    elapsed = time.process_time() - start
    return elapsed, {k: (a, b) for k, (a, b) in windows.items()}, {k: (a, b) for k, (a, b) in joined.items()}


def _ms(value: Any) -> int:
    """A window start as ms since EPOCH (datetime from Flink and DuckDB)."""
    return int((value - EPOCH) / datetime.timedelta(milliseconds=1))


# --------------------------------------------------------------------------- the runs


def run_table(prefix: str, bids: Path, auctions: Path, parallelism: int) -> dict[str, Any]:
    """The PyFlink program (``prefix`` "pyflink") or the same on flott (``prefix`` "flott")."""
    t_env = run_table_ddl(prefix, bids, auctions, parallelism)

    def timed(query: str) -> tuple[float, list[Any]]:
        start = time.perf_counter()
        with t_env.execute_sql(query).collect() as it:
            rows = list(it)
        return time.perf_counter() - start, rows

    fixed, _ = timed("SELECT COUNT(*) FROM tiny")
    window_s, window_rows = timed(FLINK_WINDOW)
    join_s, join_rows = timed(JOIN)
    return {
        "fixed": fixed,
        "window": window_s,
        "join": join_s,
        "window_rows": [[int(r[0]), _ms(r[1]), int(r[2]), int(r[3])] for r in window_rows],
        "join_rows": [[str(r[0]), int(r[1]), int(r[2])] for r in join_rows],
    }


def run_table_ddl(prefix: str, bids: Path, auctions: Path, parallelism: int) -> Any:
    """A batch TableEnvironment of ``prefix`` ("pyflink" or "flott") with the benchmark's tables."""
    table = importlib.import_module(f"{prefix}.table")
    t_env = table.TableEnvironment.create(table.EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", str(parallelism))
    t_env.execute_sql(f"""
        CREATE TABLE bids (
            auction BIGINT, price BIGINT, ts TIMESTAMP(3),
            WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
        ) WITH ('connector' = 'filesystem', 'path' = '{bids}', 'format' = 'csv')
    """)
    t_env.execute_sql(f"""
        CREATE TABLE auctions (id BIGINT, category STRING)
        WITH ('connector' = 'filesystem', 'path' = '{auctions}', 'format' = 'csv')
    """)
    t_env.execute_sql("CREATE TEMPORARY VIEW tiny AS SELECT * FROM (VALUES (1)) AS t(x)")
    return t_env


def run_duckdb(bids: Path, auctions: Path, parallelism: int) -> dict[str, Any]:
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads TO {parallelism}")
    con.execute(f"""
        CREATE VIEW bids AS SELECT * FROM read_csv('{bids}/*.csv', header = false,
            columns = {{'auction': 'BIGINT', 'price': 'BIGINT', 'ts': 'TIMESTAMP'}})
    """)
    con.execute(f"""
        CREATE VIEW auctions AS SELECT * FROM read_csv('{auctions}/*.csv', header = false,
            columns = {{'id': 'BIGINT', 'category': 'VARCHAR'}})
    """)

    def timed(query: str) -> tuple[float, list[Any]]:
        start = time.perf_counter()
        rows = con.execute(query).fetchall()
        return time.perf_counter() - start, rows

    fixed, _ = timed("SELECT COUNT(*) FROM (VALUES (1)) AS t(x)")
    window_s, window_rows = timed(DUCKDB_WINDOW)
    join_s, join_rows = timed(JOIN)
    return {
        "fixed": fixed,
        "window": window_s,
        "join": join_s,
        "window_rows": [[int(r[0]), _ms(r[1]), int(r[2]), int(r[3])] for r in window_rows],
        "join_rows": [[str(r[0]), int(r[1]), int(r[2])] for r in join_rows],
    }


def run_in_process(args: argparse.Namespace) -> int:
    """``--run SYSTEM``: one run in this process; the last stdout line is its JSON result."""
    bids, auctions = Path(args.bids), Path(args.auctions)
    if args.run == "duckdb":
        result = run_duckdb(bids, auctions, args.parallelism)
    else:
        result = run_table(args.run, bids, auctions, args.parallelism)
    sys.stdout.flush()
    os.write(1, (json.dumps(result) + "\n").encode())
    return 0


# --------------------------------------------------------------------------- the harness


@dataclass
class Runner:
    name: str
    system: str  # bare, duckdb, pyflink, flott
    fixed: list[float] = field(default_factory=list)
    window: list[float] = field(default_factory=list)
    join: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def check(result: dict[str, Any], windows: Windows, joined: Joined) -> None:
    got_w = {(a, w): (c, s) for a, w, c, s in result["window_rows"]}
    if len(got_w) != len(result["window_rows"]) or got_w != windows:
        wrong = sum(1 for k, v in windows.items() if got_w.get(k) != v) + len(set(got_w) - set(windows))
        raise AssertionError(f"window query: {wrong} of {len(windows)} (auction, window) rows differ")
    got_j = {c: (n, s) for c, n, s in result["join_rows"]}
    if got_j != joined:
        raise AssertionError(f"join query: {got_j} != {joined}")


def run_once(r: Runner, bids: Path, auctions: Path, parallelism: int, tmp: Path) -> dict[str, Any]:
    from benchlib import PEERS_PY, java_home

    python = str(PEERS_PY) if r.system == "pyflink" else sys.executable
    cmd = [python, __file__, "--run", r.system, "--bids", str(bids), "--auctions", str(auctions)]
    cmd += ["--parallelism", str(parallelism)]
    env = dict(os.environ)
    if r.system == "pyflink":
        env.pop("PYTHONPATH", None)
        env["PATH"] = f"{PEERS_PY.parent}{os.pathsep}{env.get('PATH', '')}"
        if java_home():
            env["JAVA_HOME"] = java_home() or ""
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=str(tmp), env=env, timeout=RUN_TIMEOUT_S)
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip().splitlines()[-3:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def flott_table_importable() -> bool:
    try:
        return importlib.util.find_spec("flott.table") is not None
    except ImportError:
        return False


def flott_table_refusal(bids: Path, auctions: Path) -> str | None:
    """Why flott.table cannot plan this benchmark yet (its NotYetSupportedError), or None.

    The tables are declared as the benchmark declares them, nothing runs; a construct flott
    refuses at plan time skips the flott rows with its message instead of failing the run."""
    from flott.errors import NotYetSupportedError

    try:
        run_table_ddl("flott", bids, auctions, 1)
    except NotYetSupportedError as e:
        return str(e)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, help="bids (default 2,000,000; --quick: 100,000)")
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--quick", action="store_true", help="100k records, 1 round; PyFlink only with --only pyflink"
    )
    parser.add_argument("--no-peers", action="store_true", help="the bare loop and flott only")
    parser.add_argument("--only", default="", help="comma-separated systems: flott,pyflink,duckdb")
    # one run in this process (started by the harness):
    parser.add_argument("--run", choices=["flott", "pyflink", "duckdb"], help=argparse.SUPPRESS)
    parser.add_argument("--bids", help=argparse.SUPPRESS)
    parser.add_argument("--auctions", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        return run_in_process(args)

    from benchlib import fmt_num, java_home, log, markdown_table, peer_available, ratio_cell, summary

    if args.quick:
        args.rounds = 1
    if args.records is None:
        args.records = 100_000 if args.quick else 2_000_000
    only = set(filter(None, args.only.split(",")))
    notes: list[str] = []
    runners = [Runner("bare loop, 1 process", "bare")]

    def wanted(system: str) -> bool:
        return not only or system in only

    if wanted("flott"):
        if flott_table_importable():
            runners.append(Runner(f"flott p={args.parallelism}", "flott"))
        else:
            notes.append("flott rows skipped: flott.table cannot be imported yet (issue 19).")
    if args.no_peers:
        notes.append("Peers skipped (--no-peers).")
    else:
        if wanted("duckdb"):
            if importlib.util.find_spec("duckdb") is not None:
                runners.append(Runner(f"DuckDB, {args.parallelism} threads", "duckdb"))
            else:
                notes.append("DuckDB rows skipped: duckdb is not installed (bench/setup installs it).")
        if not wanted("pyflink"):
            pass
        elif args.quick and "pyflink" not in only:
            notes.append(
                "--quick: PyFlink rows skipped (its JVM and a MiniCluster per job take 15-60 s here; "
                "`--quick --only pyflink` runs them)."
            )
        elif peer_available("pyflink") and java_home():
            runners.append(Runner(f"PyFlink 2.3 p={args.parallelism}", "pyflink"))
        else:
            notes.append("PyFlink rows skipped: bench/.venv-peers has no pyflink or there is no Java.")

    tmp = Path(tempfile.mkdtemp(prefix="flott-bench-sql-"))
    started = time.monotonic()
    try:
        log(f"sql: writing {args.records:,} records")
        bids, auctions = write_input(tmp / "input", args.records, args.keys)
        flott_runner = next((r for r in runners if r.system == "flott"), None)
        refusal = flott_table_refusal(bids, auctions) if flott_runner is not None else None
        if flott_runner is not None and refusal is not None:
            runners.remove(flott_runner)
            notes.append(
                f"flott rows skipped: flott.table refuses this benchmark's SQL at plan time ({refusal})."
            )
        _, windows, joined = bare_loop(args.records, args.keys)
        for round_no in range(args.rounds):
            for r in runners:
                log(f"sql round {round_no + 1}/{args.rounds}: {r.name}")
                try:
                    if r.system == "bare":
                        elapsed, w, j = bare_loop(args.records, args.keys)
                        if (w, j) != (windows, joined):
                            raise AssertionError("the bare loop is not deterministic")
                        r.window.append(elapsed)  # both queries in one pass: shown once
                        continue
                    result = run_once(r, bids, auctions, args.parallelism, tmp)
                    check(result, windows, joined)
                    r.fixed.append(result["fixed"])
                    r.window.append(result["window"])
                    r.join.append(result["join"])
                except Exception as e:  # the row says so; other rows go on
                    r.failures.append(str(e))
                    log(f"{r.name}: {e}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    total_s = time.monotonic() - started

    duck = next((r for r in runners if r.system == "duckdb"), None)

    def vs_duckdb(r: Runner, attr: str) -> str:
        """This runner's time over DuckDB's, round by round (how many times slower)."""
        if duck is None or r is duck or r.system == "bare":
            return ""
        mine, theirs = getattr(r, attr), getattr(duck, attr)
        return ratio_cell([a / b for a, b in zip(mine, theirs, strict=False) if a and b])

    def cell(values: list[float]) -> str:
        if not values:
            return "–"
        med, lo, hi = summary(values)
        return f"{med:.3f}" if len(values) == 1 else f"{med:.3f} ({lo:.3f}–{hi:.3f})"

    rows = []
    for r in runners:
        runs = f"{len(r.window)}/{len(r.window) + len(r.failures)}"
        if not r.window:
            rows.append([r.name, "failed", "", "", "", "", "", runs])
            continue
        if r.system == "bare":
            rate = fmt_num(args.records / summary(r.window)[0])
            rows.append([r.name, "–", f"{cell(r.window)} (both)", "", f"{rate}/s", "", "", runs])
            continue
        rate = fmt_num(args.records / summary(r.window)[0])
        rows.append(
            [
                r.name,
                cell(r.fixed),
                cell(r.window),
                cell(r.join),
                f"{rate}/s",
                vs_duckdb(r, "window"),
                vs_duckdb(r, "join"),
                runs,
            ]
        )
    print(
        f"\n### SQL in batch mode: tumbling-window aggregation and join "
        f"({args.rounds} round(s), {total_s:.0f} s in all)\n"
    )
    print(
        f"{args.records:,} bids in {FILES} csv files, {args.keys:,} auctions in {CATEGORIES} categories, "
        f"1 s tumbling windows ({len(windows):,} (auction, window) rows); every run's rows checked "
        "against the bare loop's.\n"
    )
    print(
        markdown_table(
            [
                "runner",
                "1-row query s",
                "window query s",
                "join query s",
                "window records/s",
                "window vs DuckDB (time)",
                "join vs DuckDB (time)",
                "runs ok",
            ],
            rows,
        )
    )
    print(
        "\nTimes in seconds, median (min–max over rounds). Flink-like systems: `execute_sql(q).collect()` "
        "until the last row, a job's fixed cost included (the 1-row query shows it alone; PyFlink "
        "starts a MiniCluster per job); DuckDB: `execute(q).fetchall()`, the CSV parsed by each query. "
        "The bare loop: CPU time of one Python pass computing both results over records in memory. "
        "'vs DuckDB' is this runner's time over DuckDB's, round by round."
    )
    for r in runners:
        for f in r.failures:
            notes.append(f"{r.name} failed: {f}")
    if notes:
        print()
        for n in notes:
            print(f"- {n}")
    return 1 if any(r.failures for r in runners) else 0


if __name__ == "__main__":
    sys.exit(main())
