"""The bounded chaos run of the suite: every default fault class once, in a seeded order, against an
HA session cluster running a checkpointing job with exactly checkable output while a client submits
and cancels small jobs (see :mod:`tests.chaos.chaos_run`). The seed is printed; set
``FLOTT_CHAOS_SEED`` to replay an order. ``bench/chaos.py --minutes N`` is the long mode."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.chaos.chaos_run import DEFAULT_FAULTS, ChaosRun, chaos_seed, tally_table
from tests.highavailability.zookeeper_server import find_classpath


@pytest.mark.skipif(find_classpath() is None, reason="ZooKeeper is not installed (apt-get install zookeeper)")
def test_cluster_survives_every_fault_class_with_exact_output(tmp_path: Path) -> None:
    seed = chaos_seed()
    run = ChaosRun(tmp_path, seed, round_records=20000)
    started = time.monotonic()
    try:
        run.start()
        order = list(DEFAULT_FAULTS)
        run.rng.shuffle(order)
        for kind in order:
            time.sleep(run.rng.uniform(0.5, 2.0))
            run.inject(kind)
        summary = run.finish()
        print(tally_table(run.tally()))
        print(f"ledger {summary}; {time.monotonic() - started:.0f}s (seed {seed})")
        tally = run.tally()
        assert all(tally[k].survived == 1 for k in DEFAULT_FAULTS), tally
        assert summary["bounded"] + summary["unbounded"] > 0, "the client got no job acknowledged"
        # a submission or cancellation the cluster refused was refused as unavailable (no leader
        # yet, or the leader just died), never with an internal error
        assert run.client is not None
        assert all(r.startswith("503 ") for r in run.client.refused), run.client.refused
    except BaseException:
        print(f"chaos seed {seed} failed; replay with FLOTT_CHAOS_SEED={seed}")
        raise
    finally:
        stubborn = run.close()
    assert not stubborn, f"processes SIGTERM did not stop: {stubborn}"
