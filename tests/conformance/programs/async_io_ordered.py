import asyncio

from pyflink.common import Time, Types
from pyflink.datastream import AsyncDataStream, AsyncFunction, RuntimeContext, StreamExecutionEnvironment

PRICES = {"apple": 3, "banana": 1, "cherry": 7, "date": 5, "elderberry": 11, "fig": 2}


class PriceLookup(AsyncFunction):
    """A remote lookup: slower for some keys, so answers complete out of order."""

    def open(self, runtime_context: RuntimeContext):
        self.prices = dict(PRICES)

    async def async_invoke(self, value: str) -> list[tuple]:
        await asyncio.sleep(0.05 * (len(value) % 4))
        return [(value, self.prices.get(value, -1))]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    fruit = ["elderberry", "fig", "apple", "kiwi", "banana", "cherry", "date", "apple", "fig", "banana"]
    ds = env.from_collection(fruit, type_info=Types.STRING())
    priced = AsyncDataStream.ordered_wait(
        ds,
        PriceLookup(),
        Time.seconds(30),
        capacity=4,
        output_type=Types.TUPLE([Types.STRING(), Types.INT()]),
    )
    priced.map(lambda t: f"{t[0]} costs {t[1]}", output_type=Types.STRING()).print()
    priced.print()
    env.execute("async_io_ordered")


if __name__ == "__main__":
    main()
