"""Backpressure, cancellation, late registration and broken peers (real sockets, threads, processes)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EnvFactory, Worker

from flott.errors import DataExchangeError, TaskCancelledError
from flott.runtime.io.network import InputChannelSpec, ResultPartition

pytestmark = pytest.mark.timeout(30)

PRODUCER_SCRIPT = Path(__file__).with_name("producer_process.py")


def wait_until(predicate: object, timeout: float = 5.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def blocked_producer(partition: ResultPartition, subpartition: int = 0) -> Worker:
    """A producer that emits until it is unblocked by an exception (which the Worker keeps)."""

    def produce() -> None:
        i = 0
        while True:
            partition.emit(subpartition, [i])
            i += 1

    worker = Worker(produce, "producer")
    worker.start()
    return worker


@pytest.mark.parametrize("mode", ["local", "remote"])
def test_backpressure_bounds_queue_and_release_wakes_producer(make_env: EnvFactory, mode: str) -> None:
    producer_env = make_env(buffers_per_channel=3)
    consumer_env = producer_env if mode == "local" else make_env(buffers_per_channel=3)
    partition = producer_env.create_result_partition("bp", 1)
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "bp", 0)])
    producer = blocked_producer(partition)

    # the consumer never polls: the producer fills its subpartition and blocks there
    wait_until(lambda: partition.is_back_pressured, what="producer to block")
    time.sleep(0.1)  # give a runaway producer the chance to overfill
    assert producer.is_alive()
    assert partition.num_queued_buffers == 3
    assert partition.queued_buffers_per_subpartition() == [3]
    if mode == "remote":
        # plus exactly one credit window at the consumer: memory is bounded on both sides
        assert gate.num_queued_buffers == 3
        assert partition.num_buffers_out == 3
    assert producer_env.snapshot_metrics()["back_pressured"] == {"bp": True}

    producer_env.release_partition("bp")
    with pytest.raises(TaskCancelledError, match="released"):
        producer.finish(5)
    assert partition.back_pressured_time_ns > 50_000_000
    assert not partition.is_back_pressured
    # the consumer learns its producer went away (buffers already received may come first)
    with pytest.raises(DataExchangeError, match="released"):
        for _ in range(10):
            gate.poll(5)
    gate.close()


@pytest.mark.parametrize("mode", ["local", "remote"])
def test_slow_consumer_slows_producer_without_losing_data(make_env: EnvFactory, mode: str) -> None:
    producer_env = make_env(buffers_per_channel=2)
    consumer_env = producer_env if mode == "local" else make_env(buffers_per_channel=2)
    partition = producer_env.create_result_partition("slow", 1)
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "slow", 0)])
    max_queued = 0

    def produce() -> None:
        nonlocal max_queued
        for i in range(40):
            partition.emit(0, [i])
            max_queued = max(max_queued, partition.num_queued_buffers)
        partition.finish()

    producer = Worker(produce)
    producer.start()
    got = []
    while not gate.is_finished:
        item = gate.poll(5)
        assert item is not None
        if isinstance(item[1], list):
            got.extend(item[1])
            time.sleep(0.002)
    producer.finish()
    assert got == list(range(40))
    assert max_queued <= 2


def test_closing_the_gate_wakes_a_blocked_poll(make_env: EnvFactory) -> None:
    env = make_env()
    env.create_result_partition("p", 1)
    gate = env.create_input_gate([InputChannelSpec(env.address, "p", 0)])
    consumer = Worker(lambda: gate.poll(None), "consumer")
    consumer.start()
    time.sleep(0.05)
    gate.close()
    with pytest.raises(TaskCancelledError):
        consumer.finish(5)
    with pytest.raises(TaskCancelledError):
        gate.poll(0)


@pytest.mark.parametrize("mode", ["local", "remote"])
def test_consumer_going_away_fails_the_blocked_producer(make_env: EnvFactory, mode: str) -> None:
    producer_env = make_env(buffers_per_channel=2)
    consumer_env = producer_env if mode == "local" else make_env(buffers_per_channel=2)
    partition = producer_env.create_result_partition("gone", 2)
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "gone", 0)])
    producer = blocked_producer(partition)
    wait_until(lambda: partition.subpartition(0).has_consumer, what="consumer to attach")
    wait_until(lambda: partition.is_back_pressured, what="producer to block")
    gate.close()  # consumer task cancelled before the end of the partition
    with pytest.raises(DataExchangeError, match=r"gone#0|cancelled|went away"):
        producer.finish(5)
    # the other subpartition is unaffected until the partition is released
    partition.emit(1, ["still fine"])
    with pytest.raises(DataExchangeError):
        partition.wait_until_consumed(1)


def test_consumer_environment_dying_fails_the_producer(make_env: EnvFactory) -> None:
    producer_env, consumer_env = make_env(buffers_per_channel=2), make_env(buffers_per_channel=2)
    partition = producer_env.create_result_partition("p", 1)
    consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "p", 0)])
    producer = blocked_producer(partition)
    wait_until(lambda: partition.subpartition(0).has_consumer, what="consumer to attach")
    wait_until(lambda: partition.is_back_pressured, what="producer to block")
    make_env.close(consumer_env)  # every connection of the consumer TaskExecutor drops
    with pytest.raises(DataExchangeError, match="lost connection to consumer"):
        producer.finish(5)


def test_finished_subpartition_survives_consumer_leaving(make_env: EnvFactory) -> None:
    producer_env, consumer_env = make_env(), make_env()
    partition = producer_env.create_result_partition("p", 1)
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "p", 0)])
    partition.emit(0, [1])
    partition.finish()
    assert gate.poll(5) == (0, [1])
    assert partition.wait_until_consumed(5)
    gate.close()
    make_env.close(consumer_env)
    assert partition.is_consumed and not partition.is_released
    with pytest.raises(DataExchangeError, match="finished"):
        partition.emit(0, [2])


@pytest.mark.parametrize("mode", ["local", "remote"])
def test_partition_registered_late_within_request_timeout(make_env: EnvFactory, mode: str) -> None:
    producer_env = make_env(request_timeout_s=5.0)
    consumer_env = producer_env if mode == "local" else make_env(request_timeout_s=5.0)
    # the consumer is deployed first and asks for a partition its producer has not created yet
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "late", 0)])
    assert gate.poll(0.3) is None
    partition = producer_env.create_result_partition("late", 1)
    partition.emit(0, ["hello"])
    partition.finish()
    assert gate.poll(5) == (0, ["hello"])
    assert gate.poll(5) is not None and gate.is_finished
    assert partition.wait_until_consumed(5)


@pytest.mark.parametrize("mode", ["local", "remote"])
def test_partition_never_registered_fails_after_request_timeout(make_env: EnvFactory, mode: str) -> None:
    producer_env = make_env(request_timeout_s=0.3)
    consumer_env = producer_env if mode == "local" else make_env(request_timeout_s=5.0)
    started = time.monotonic()
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "job7-never", 0)])
    with pytest.raises(DataExchangeError, match=r"job7-never was not registered at producer .* within 0\.3s"):
        gate.poll(5)
    assert 0.25 < time.monotonic() - started < 3


def test_request_for_released_partition_fails_at_once(make_env: EnvFactory) -> None:
    producer_env, consumer_env = make_env(request_timeout_s=10.0), make_env()
    producer_env.create_result_partition("old", 1).release()
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "old", 0)])
    started = time.monotonic()
    with pytest.raises(DataExchangeError, match=r"old .* already released"):
        gate.poll(5)
    assert time.monotonic() - started < 2


def test_subpartition_index_out_of_range_and_double_consumer(make_env: EnvFactory) -> None:
    producer_env, consumer_env = make_env(), make_env()
    producer_env.create_result_partition("p", 1)
    bad = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "p", 5)])
    with pytest.raises(DataExchangeError, match="no index 5"):
        bad.poll(5)
    first = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "p", 0)])
    partition = producer_env.get_result_partition("p")
    assert partition is not None
    wait_until(lambda: partition.subpartition(0).has_consumer, what="remote request to attach")
    second = producer_env.create_input_gate([InputChannelSpec(producer_env.address, "p", 0)])
    with pytest.raises(DataExchangeError, match="already being consumed"):
        second.poll(5)
    assert first.poll(0.01) is None


def test_unreachable_producer_fails_the_channel(make_env: EnvFactory) -> None:
    env = make_env(connect_timeout_s=2.0)
    dead = make_env()
    dead_address = dead.address
    make_env.close(dead)  # nobody listens there any more
    gate = env.create_input_gate([InputChannelSpec(dead_address, "p", 0)])
    with pytest.raises(DataExchangeError, match="cannot connect to producer"):
        gate.poll(5)


@pytest.fixture
def producer_process() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()


def start_producer(procs: list[subprocess.Popen[str]], *args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(PRODUCER_SCRIPT), *args],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    procs.append(proc)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 10)
    assert ready, "producer process did not report its address"
    line = proc.stdout.readline()
    assert line.startswith("ADDRESS "), line
    return proc, line.split()[1]


def test_killed_producer_process_fails_the_consumer(
    make_env: EnvFactory, producer_process: list[subprocess.Popen[str]]
) -> None:
    proc, address = start_producer(producer_process, "job9-ds-0-0", "-1", "100", "2")
    env = make_env()
    gate = env.create_input_gate([InputChannelSpec(address, "job9-ds-0-0", 0)])
    for expected in range(5):
        item = gate.poll(5)
        assert item is not None and isinstance(item[1], list) and item[1][0][0] == expected
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(5)
    with pytest.raises(DataExchangeError, match=r"lost connection to producer .*job9-ds-0-0"):
        for _ in range(20):  # buffers already received may still be delivered first
            gate.poll(5)


def test_producer_process_runs_to_completion(
    make_env: EnvFactory, producer_process: list[subprocess.Popen[str]]
) -> None:
    proc, address = start_producer(producer_process, "p", "50", "10")
    env = make_env()
    gate = env.create_input_gate([InputChannelSpec(address, "p", 0)])
    seqs = []
    while not gate.is_finished:
        item = gate.poll(5)
        assert item is not None
        if isinstance(item[1], list):
            seqs.append(item[1][0][0])
    assert seqs == list(range(50))
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "DONE"
    assert proc.wait(5) == 0


@pytest.mark.parametrize("victim", ["release-partition", "close-gate", "close-environment"])
def test_failures_cascade_without_hanging(make_env: EnvFactory, victim: str) -> None:
    """Like tasks do: a producer that fails releases its partition, a consumer closes its gate.

    Whatever breaks first, every task thread of the 3x3 all-to-all ends with
    DataExchangeError or TaskCancelledError; nothing stays blocked.
    """
    envs = [make_env(buffers_per_channel=2) for _ in range(3)]
    n = 3
    gates = [
        envs[(c + 1) % 3].create_input_gate([InputChannelSpec(envs[p].address, f"p{p}", c) for p in range(n)])
        for c in range(n)
    ]
    partitions = [envs[p].create_result_partition(f"p{p}", n) for p in range(n)]

    def produce(p: int) -> str:
        try:
            seq = 0
            while True:
                for c in range(n):
                    partitions[p].emit(c, [(p, c, seq)])
                seq += 1
        except (DataExchangeError, TaskCancelledError) as e:
            partitions[p].release()
            return type(e).__name__

    def consume(c: int) -> str:
        try:
            while True:
                assert gates[c].poll(10) is not None, "stalled"
        except (DataExchangeError, TaskCancelledError) as e:
            gates[c].close()
            return type(e).__name__

    workers = [Worker(lambda p=p: produce(p)) for p in range(n)] + [
        Worker(lambda c=c: consume(c)) for c in range(n)
    ]
    for w in workers:
        w.start()
    time.sleep(0.1)
    if victim == "release-partition":
        partitions[1].release()
    elif victim == "close-gate":
        gates[1].close()
    else:
        make_env.close(envs[1])
    outcomes = [w.finish(10) for w in workers]
    assert set(outcomes) <= {"DataExchangeError", "TaskCancelledError"}
