"""Hash partitioning by key (Flink's KeyGroupStreamPartitioner).

key selector -> key -> key group (stable hash mod max parallelism) -> consumer
subtask owning that key group. The consumer's keyed state is organised by the
same key groups, so a key always lands where its state lives, in every
process and after every restart.

The stable hash costs more than a dict lookup, and real key streams repeat
keys, so the channel of each key is memoised in a dict that is bounded
(cleared when it grows past :data:`CHANNEL_CACHE_LIMIT`): a high-cardinality
key stream pays the hash, a repetitive one pays a dict hit.

A declared output type of the producer (PyFlink's coder check where records leave a fused Python
operator) may be folded into the loop here (:meth:`KeyGroupStreamPartitioner.fold_check`): the
generated check of each record runs inside the loop that already visits it to take its key, so a
typed keyed edge costs no second pass over the batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flott.common.fit_check import LOCALS, fit_branch, namespace
from flott.common.type_conversion import DeclaredKeySelector, ValueFix
from flott.runtime.partitioner.stream_partitioner import StreamPartitioner
from flott.runtime.state.key_groups import key_to_subtask_function, unhashable_key_error

CHANNEL_CACHE_LIMIT = 1 << 16


class KeyGroupStreamPartitioner(StreamPartitioner):
    """Routes each record by the key group of its key."""

    def __init__(
        self, key_selector: Callable[[Any], Any], max_parallelism: int, *, timestamped: bool = False
    ) -> None:
        """``timestamped``: records are ``(value, timestamp)`` pairs and the key is the value's.

        (Unpacking here rather than in a wrapping selector saves a Python call per record.)
        """
        super().__init__()
        self._key_selector = key_selector
        self._timestamped = timestamped
        self._max_parallelism = max_parallelism
        self._cache: dict[Any, int] = {}
        self._subtask_of: Callable[[Any], int] = lambda key: 0
        self._checked: Callable[..., None] | None = None
        """The loop with the declared output type's check folded in (:meth:`fold_check`)."""

    def setup(self, num_channels: int) -> None:
        super().setup(num_channels)
        if num_channels > self._max_parallelism:
            raise ValueError(
                f"hash partitioning over {num_channels} channels needs max parallelism >= {num_channels}, "
                f"got {self._max_parallelism}"
            )
        self._subtask_of = key_to_subtask_function(self._max_parallelism, num_channels)
        self._cache.clear()
        if isinstance(getattr(self._key_selector, "__self__", None), DeclaredKeySelector):
            # A declared key_type is checked on every key, as PyFlink's key coder does, even
            # where one consumer would take every record without its key.
            self.single_channel = None

    def select_channel(self, record: Any) -> int:
        """The channel of one record (for tests and single-record callers; batches use distribute)."""
        return self._subtask_of(self._key_selector(record[0] if self._timestamped else record))

    def fold_check(self, type_info: Any, fix: ValueFix) -> bool:
        """Check every record against its producer's declared ``type_info`` in the loop that
        routes it, as the batch check in front of this partitioner would: a record that fits
        passes as it is, another goes through ``fix`` (converted as PyFlink's coder converts, or
        refused with its error) before its key is taken. False where the type has no generated
        check; the caller then checks the batch in front of the partitioner."""
        var, head = ("value", ["            value = record[0]"]) if self._timestamped else ("record", [])
        key_source = "value" if self._timestamped else "record"
        body = [
            f"key = key_selector({key_source})",
            "channel = lookup(key)",
            "if channel is None:",
            "    channel = cache[key] = subtask_of(key)",
            "buffers[channel].append(record)",
        ]
        fits = fit_branch(type_info, var, [*body, "continue"], "            ")
        if fits is None:
            return False
        source = "\n".join(
            [
                f"def run(records, buffers, key_selector, cache, subtask_of, {LOCALS}):",
                "    lookup = cache.get",
                "    key = None",
                "    try:",
                "        for record in records:",
                *head,
                *fits,
                "            record = SLOW(record)",
                *(["            value = record[0]"] if self._timestamped else []),
                *(f"            {line}" for line in body),
                "    except TypeError as e:",
                "        RETHROW(key, e)",
                "        raise",
                "",
            ]
        )
        compiled = namespace(SLOW=fix, RETHROW=_rethrow_unhashable)
        exec(compile(source, f"<checked hash partitioning {type_info!r}>", "exec"), compiled)
        self._checked = compiled["run"]
        return True

    def distribute(self, records: list[Any], buffers: list[list[Any]]) -> None:
        key_selector = self._key_selector
        cache = self._cache
        if len(cache) > CHANNEL_CACHE_LIMIT:
            cache.clear()
        checked = self._checked
        if checked is not None:
            checked(records, buffers, key_selector, cache, self._subtask_of)
            return
        lookup = cache.get
        subtask_of = self._subtask_of
        key: Any = None
        try:
            if self._timestamped:
                for record in records:
                    key = key_selector(record[0])
                    channel = lookup(key)
                    if channel is None:
                        channel = cache[key] = subtask_of(key)
                    buffers[channel].append(record)
            else:
                for record in records:
                    key = key_selector(record)
                    channel = lookup(key)
                    if channel is None:
                        channel = cache[key] = subtask_of(key)
                    buffers[channel].append(record)
        except TypeError as e:
            _rethrow_unhashable(key, e)
            raise


def _rethrow_unhashable(key: Any, error: TypeError) -> None:
    """Turn 'unhashable type' from the channel cache into an error that names the key selector."""
    try:
        hash(key)
    except TypeError:
        raise unhashable_key_error(key, error) from None
