"""Throughput check of the exchange layer (run by hand: ``python tests/network/bench_network_exchange.py``).

One producer thread emits batches of small tuples ``(int, str, float)``, one
consumer thread polls them:

* ``local``: same environment, the list objects are handed over;
* ``remote``: TCP loopback between two environments of this process (each
  with its own event-loop thread; all four threads share one GIL);
* ``process``: the producer TaskExecutor is a separate process (the real
  deployment shape), the consumer is here.

``pickle`` is the bound set by one pickle.dumps + pickle.loads per batch on
one core, for scale.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

from conftest import EnvFactory, Worker

from flott.runtime.io.network import InputChannelSpec


def run(mode: str, batches: int, batch_size: int, buffers_per_channel: int) -> float:
    factory = EnvFactory()
    try:
        producer_env = factory(buffers_per_channel=buffers_per_channel)
        consumer_env = producer_env if mode == "local" else factory(buffers_per_channel=buffers_per_channel)
        partition = producer_env.create_result_partition(f"bench-{mode}", 1)
        gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, f"bench-{mode}", 0)])
        template = [(i, "word", 1.5) for i in range(batch_size)]

        def produce() -> None:
            for _ in range(batches):
                partition.emit(0, template.copy())
            partition.finish()
            partition.wait_until_consumed(30)

        def consume() -> int:
            n = 0
            while not gate.is_finished:
                item = gate.poll(10)
                assert item is not None, "stalled"
                if type(item[1]) is list:
                    n += len(item[1])
            return n

        producer, consumer = Worker(produce, "producer"), Worker(consume, "consumer")
        started = time.perf_counter()
        consumer.start()
        producer.start()
        received = consumer.finish(120)
        elapsed = time.perf_counter() - started
        producer.finish(10)
        assert received == batches * batch_size
        return received / elapsed
    finally:
        factory.close_all()


def run_process(batches: int, batch_size: int, buffers_per_channel: int) -> float:
    script = os.path.join(os.path.dirname(__file__), "producer_process.py")
    factory = EnvFactory()
    proc = subprocess.Popen(
        [sys.executable, script, "bench-process", str(batches), str(batch_size), str(buffers_per_channel)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().split()[1]
        env = factory(buffers_per_channel=buffers_per_channel)
        gate = env.create_input_gate([InputChannelSpec(address, "bench-process", 0)])
        first = gate.poll(10)  # the producer process is up and streaming: start the clock
        assert first is not None
        started = time.perf_counter()
        n = 0
        while not gate.is_finished:
            item = gate.poll(10)
            assert item is not None, "stalled"
            if type(item[1]) is list:
                n += len(item[1])
        assert n == (batches - 1) * batch_size
        return n / (time.perf_counter() - started)
    finally:
        proc.wait(30)
        factory.close_all()


def pickle_bound(batch_size: int) -> float:
    batch = [(i, "word", 1.5) for i in range(batch_size)]
    rounds = 300
    started = time.perf_counter()
    for _ in range(rounds):
        pickle.loads(pickle.dumps(batch, 5))
    return rounds * batch_size / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--buffers-per-channel", type=int, default=4)
    args = parser.parse_args()
    a = (args.batches, args.batch_size, args.buffers_per_channel)
    rates = {
        "pickle": pickle_bound(args.batch_size),
        "local": run("local", *a),
        "remote": run("remote", *a),
        "process": run_process(*a),
    }
    for mode, rate in rates.items():
        print(f"{mode:8s}: {rate / 1e6:6.2f} M records/s ({args.batch_size}-record batches)")


if __name__ == "__main__":
    main()
