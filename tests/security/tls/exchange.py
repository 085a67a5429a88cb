"""Two real ShuffleEnvironments (each on its own event-loop thread, TCP over loopback) moving
batches from a producer to a consumer, with or without internal TLS: for the data-exchange tests
and for measuring what TLS costs per record."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from contextlib import contextmanager

from flott.runtime.io.network import InputChannelSpec, NetworkConfig, ShuffleEnvironment
from flott.ssl_context import InternalSsl
from tests.network.conftest import LoopThread, Worker

_ids = itertools.count()


@contextmanager
def environment(tls: InternalSsl | None, **config: object) -> Iterator[ShuffleEnvironment]:
    loop_thread = LoopThread("te-loop-tls")
    env = ShuffleEnvironment(NetworkConfig(**config), loop=loop_thread.loop, tls=tls)  # type: ignore[arg-type]
    try:
        loop_thread.run(env.start())
        yield env
    finally:
        try:
            loop_thread.run(env.close())
        finally:
            loop_thread.stop()


def transfer(
    producer: ShuffleEnvironment, consumer: ShuffleEnvironment, batches: int, batch_size: int = 200
) -> tuple[int, float]:
    """(records the consumer received, records per second); raises what the consumer's gate raised."""
    partition_id = f"tls-exchange-{next(_ids)}"
    partition = producer.create_result_partition(partition_id, 1)
    gate = consumer.create_input_gate([InputChannelSpec(producer.address, partition_id, 0)])
    template = [(i, "word", 1.5) for i in range(batch_size)]

    def produce() -> None:
        for _ in range(batches):
            partition.emit(0, template.copy())
        partition.finish()
        partition.wait_until_consumed(60)

    def consume() -> int:
        n = 0
        while not gate.is_finished:
            item = gate.poll(20)
            assert item is not None, "stalled"
            if type(item[1]) is list:
                n += len(item[1])
        return n

    producer_thread, consumer_thread = Worker(produce, "producer"), Worker(consume, "consumer")
    started = time.perf_counter()
    consumer_thread.start()
    producer_thread.start()
    try:
        received = consumer_thread.finish(120)
    except BaseException:
        partition.release()
        raise
    elapsed = time.perf_counter() - started
    producer_thread.finish(30)
    return received, received / elapsed
