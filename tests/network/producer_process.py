"""A producer TaskExecutor in its own process, for tests that kill it and for the throughput check.

Usage: ``python producer_process.py PARTITION_ID NUM_BATCHES BATCH_SIZE [BUFFERS_PER_CHANNEL]``.
Starts a ShuffleEnvironment on an event loop (main thread, like a TaskExecutor),
prints ``ADDRESS host:port``, emits ``NUM_BATCHES`` batches of ``BATCH_SIZE``
small tuples into subpartition 0 from a task thread (NUM_BATCHES < 0: forever),
finishes, waits until consumed, prints ``DONE`` and exits.
"""

from __future__ import annotations

import asyncio
import sys
import threading

from flott.runtime.io.network import NetworkConfig, ShuffleEnvironment


async def main(partition_id: str, num_batches: int, batch_size: int, buffers_per_channel: int) -> None:
    env = ShuffleEnvironment(NetworkConfig(buffers_per_channel=buffers_per_channel))
    address = await env.start()
    partition = env.create_result_partition(partition_id, 1)
    done = asyncio.get_running_loop().create_future()
    loop = asyncio.get_running_loop()

    def produce() -> None:
        try:
            template = [(i, "word", 1.5) for i in range(batch_size)]
            n = 0
            while num_batches < 0 or n < num_batches:
                partition.emit(0, [(n, *template[0][1:]), *template[1:]])
                n += 1
            partition.finish()
            partition.wait_until_consumed(60)
            loop.call_soon_threadsafe(done.set_result, None)
        except BaseException as e:
            loop.call_soon_threadsafe(done.set_exception, e)

    print(f"ADDRESS {address}", flush=True)
    threading.Thread(target=produce, name="producer-task", daemon=True).start()
    try:
        await done
        print("DONE", flush=True)
    finally:
        await env.close()


if __name__ == "__main__":
    args = sys.argv[1:]
    asyncio.run(main(args[0], int(args[1]), int(args[2]), int(args[3]) if len(args) > 3 else 4))
