import asyncio
import functools

from pyflink.common import Time, Types
from pyflink.datastream import (
    AsyncDataStream,
    AsyncFunction,
    AsyncRetryStrategy,
    RuntimeContext,
    StreamExecutionEnvironment,
    async_retry_predicates,
)


class FlakyLookup(AsyncFunction):
    """Refuses every third key's first two attempts; never answers for keys ending in 9."""

    def open(self, runtime_context: RuntimeContext):
        self.attempts = {}

    async def async_invoke(self, value: int) -> list[str]:
        self.attempts[value] = self.attempts.get(value, 0) + 1
        if value % 10 == 9:
            await asyncio.sleep(3600)
        await asyncio.sleep(0.01 * (value % 3))
        if value % 3 == 0 and self.attempts[value] < 3:
            raise ConnectionError("lookup refused")
        return [f"user-{value}: attempt {self.attempts[value]}"]

    def timeout(self, value: int) -> list[str]:
        return [f"user-{value}: timed out"]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    ds = env.from_collection(list(range(20)), type_info=Types.INT())
    strategy = AsyncRetryStrategy.fixed_delay(
        max_attempts=3,
        backoff_time_millis=20,
        result_predicate=None,
        exception_predicate=functools.partial(
            async_retry_predicates.exception_type_predicate, expected_error_type=ConnectionError
        ),
    )
    AsyncDataStream.unordered_wait_with_retry(
        ds, FlakyLookup(), Time.seconds(2), strategy, capacity=10, output_type=Types.STRING()
    ).print()
    env.execute("async_io_unordered_retry")


if __name__ == "__main__":
    main()
