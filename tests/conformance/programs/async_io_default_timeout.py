import asyncio

from pyflink.common import Time, Types
from pyflink.datastream import AsyncDataStream, AsyncFunction, StreamExecutionEnvironment


class SlowService(AsyncFunction):
    """Never answers for 7; the default timeout() fails the job."""

    async def async_invoke(self, value: int) -> list[int]:
        if value == 7:
            await asyncio.sleep(3600)
        return [value * 2]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    ds = env.from_collection(list(range(10)), type_info=Types.INT())
    AsyncDataStream.ordered_wait(ds, SlowService(), Time.milliseconds(500), output_type=Types.INT()).print()
    env.execute("async_io_default_timeout")


if __name__ == "__main__":
    main()
