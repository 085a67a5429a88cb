"""How many records a source task polls at a time, so its mailbox is never far away.

A source task works a batch at a time: poll up to N records, push them through
the chain (the user's maps and filters chained to the source), write the
result. Mail (a checkpoint trigger, a savepoint, a completion notification) is
looked at between batches. Flink's mailbox takes a trigger between two
records; with a fixed N of 1,024 and a chained function taking 50 ms per record,
a trigger here would wait for 51 s of records.

:class:`SourceBatchSize` keeps the time a batch takes near a target
(:data:`MAILBOX_LATENCY_TARGET_NS`) by sizing the next poll from what the last
batch cost per record: cheap records (a few µs) keep the full batch, and with it
the per-batch savings; a record slower than the target makes the batch a single
record, so a trigger waits at most for the record being processed, as in Flink.
Batches start at one record and double while they stay under the target, so
even the first batch of a slow job does not hold the mailbox.

Only the chain's work counts (from the records polled to the result written): a
reader that waits for data inside its poll (a Kafka fetch) must not be driven to
one-record polls. Time blocked on a full output (backpressure) is left out too: a
smaller batch would not bring the mailbox nearer while the task waits on its
consumer (that is the unaligned checkpoint's case).

A pure state machine (records and nanoseconds in, the next size out), fed by the
source loop once per batch, so it is tested without threads or clocks.
"""

from __future__ import annotations

MAILBOX_LATENCY_TARGET_NS = 10_000_000
"""A batch should take about this long (10 ms): the longest a mail waits behind records
cheaper than that. Per-batch costs (a poll, the chain's stage calls, the bookkeeping) are a few
µs, so at 10 ms they are well under 1 % of the batch."""


class SourceBatchSize:
    """The size of the next source poll, from the cost of the batches so far."""

    __slots__ = ("max_records", "size", "target_ns")

    def __init__(self, max_records: int, target_ns: int = MAILBOX_LATENCY_TARGET_NS) -> None:
        if max_records < 1:
            raise ValueError(f"max_records must be >= 1, got {max_records}")
        self.max_records = max_records
        self.target_ns = target_ns
        self.size = 1
        """Records to ask for in the next poll."""

    def observe(self, records: int, busy_ns: int) -> int:
        """A batch of ``records`` took ``busy_ns`` (without backpressure); returns the next size."""
        if records <= 0:
            return self.size
        target = self.target_ns
        if busy_ns > target:
            # Proportional: the next batch should take about the target at this cost per record.
            self.size = max(1, min(self.max_records, records * target // busy_ns))
        elif 2 * busy_ns <= target and records >= self.size and self.size < self.max_records:
            self.size = min(self.max_records, self.size * 2)
        return self.size
