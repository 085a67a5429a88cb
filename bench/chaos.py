"""The long chaos run: faults at random for N minutes on a ZooKeeper-HA session cluster.

    python bench/chaos.py [--minutes 5] [--seed S] [--disk-mb 64] [--round-records 60000]
                          [--task-managers 2] [--keep]

The same cluster, job, client and checks as ``tests/chaos`` (see tests/chaos/chaos_run.py), with
every fault class drawn at random (seeded; the seed is printed, ``--seed`` replays the order):
the suite's five (kill / pause a TaskExecutor, kill the leading JobManager, restart ZooKeeper, a
ZooKeeper blip shorter than the session timeout that must restart nothing) plus: the leading
JobManager paused until the standby leads; the leader, a TaskExecutor and ZooKeeper killed at once;
a TaskExecutor partitioned from the cluster with a network namespace; a full checkpoint disk (a
tmpfs this script mounts and unmounts). The last two need root and are left out, with the reason
printed, without it. A fault the cluster does not survive ends the run (the table shows it). At
the end: the main job's output is checked exactly, every acknowledged small job is accounted for,
and the table of faults injected and survived is printed (markdown).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.chaos.chaos_run import (  # noqa: E402
    DEFAULT_FAULTS,
    ChaosFailure,
    ChaosRun,
    tally_table,
)
from tests.chaos.network_namespace import partition_unavailable  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--disk-mb", type=int, default=64, help="size of the checkpoint tmpfs (0: none)")
    parser.add_argument("--round-records", type=int, default=60000, help="records per main-job round")
    parser.add_argument("--task-managers", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    parser.add_argument(
        "--only", action="append", default=[], metavar="FAULT", help="inject only these (repeatable)"
    )
    args = parser.parse_args(argv)

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    faults = [*DEFAULT_FAULTS, "pause leading JobManager", "everything at once"]
    skipped: dict[str, str] = {}
    disk_mb = args.disk_mb
    if os.geteuid() != 0:
        disk_mb = 0
        skipped["fill checkpoint disk"] = "needs root to mount a tmpfs"
    elif disk_mb:
        faults.append("fill checkpoint disk")
    else:
        skipped["fill checkpoint disk"] = "--disk-mb 0"
    reason = partition_unavailable()
    if reason is None:
        faults.append("partition TaskExecutor")
    else:
        skipped["partition TaskExecutor"] = reason

    if args.only:
        unknown = set(args.only) - set(faults)
        if unknown:
            parser.error(f"not available: {sorted(unknown)}; choose from {faults}")
        faults = list(args.only)

    workdir = Path(tempfile.mkdtemp(prefix="flott-chaos-"))
    run = ChaosRun(
        workdir,
        seed,
        round_records=args.round_records,
        task_managers=args.task_managers,
        disk_mb=disk_mb,
        partition="partition TaskExecutor" in faults,
    )
    started = time.monotonic()
    outcome = "passed"
    summary: dict[str, int] = {}
    try:
        run.start()
        deadline = started + args.minutes * 60
        while time.monotonic() < deadline:
            time.sleep(run.rng.uniform(0.5, 3.0))
            try:
                run.inject(run.rng.choice(faults))
            except ChaosFailure as e:
                outcome = f"FAILED: {str(e).splitlines()[0]}"
                break
        if outcome == "passed":
            try:
                summary = run.finish()
            except ChaosFailure as e:
                outcome = f"FAILED at the end: {str(e).splitlines()[0]}"
    except BaseException as e:
        outcome = f"FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        raise
    finally:
        stubborn = run.close()
        if stubborn and outcome == "passed":
            outcome = f"FAILED: SIGTERM did not stop {stubborn}"
        wall = time.monotonic() - started
        print()
        print(f"chaos run: seed {seed}, {wall / 60:.1f} min wall, {outcome}")
        print(tally_table(run.tally()))
        for kind, why in skipped.items():
            print(f"- {kind}: not injected ({why})")
        if summary:
            print(
                f"- main job: {summary['main rounds']} rounds, output exact; small jobs acknowledged: "
                f"{summary['bounded']} bounded (all FINISHED), {summary['unbounded']} unbounded "
                f"({summary['cancelled']} CANCELED); {summary['refused']} refused with an error answer, "
                f"{summary['unanswered']} unanswered (JobManager down), none lost"
            )
        if args.keep or outcome != "passed":
            print(f"work directory (logs): {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0 if outcome == "passed" else 1


if __name__ == "__main__":
    sys.exit(main())
