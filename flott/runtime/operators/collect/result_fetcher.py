"""The client's side of collecting (Flink's CollectResultFetcher, CheckpointedCollectResultBuffer,
UncheckpointedCollectResultBuffer and CollectResultIterator).

:class:`CollectResultBuffer` is the pure state machine: responses in, the
next request and the results the user may see out. What it guarantees:

* **checkpointing enabled** (exactly once, as Flink's checkpointed buffer):
  a result is handed to the user only once a completed checkpoint covers it
  (``last_checkpointed_offset``), so results arrive in steps of the
  checkpoint interval. When the sink restarts from a checkpoint (a new
  version), the client drops what it received beyond that checkpoint and
  asks again from there: the restored sink re-sends it, each result is seen
  once.
* **checkpointing disabled** (at least once): results are handed out as they
  arrive; after a restart the sink starts from nothing and the client from
  offset 0, so results delivered before the failure come again.

:class:`CollectResultFetcher` runs the polling on the client's event loop
(10 ms doubling to 100 ms between empty answers); :class:`CollectResultIterator`
is the synchronous iterator the user holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
from collections import deque
from typing import TYPE_CHECKING, Any

from flott.common.job_client import JobClient, describe_failure
from flott.common.typeinfo import RowTypeInfo, TupleTypeInfo
from flott.common.types import Row
from flott.errors import FlottError, IllegalStateTransitionError, JobCancellationError, JobError
from flott.runtime.operators.collect.protocol import (
    CollectCoordinationRequest,
    CollectCoordinationResponse,
    decode_response,
    encode,
)

if TYPE_CHECKING:
    from flott.client.cluster_client import ClusterClient
    from flott.runtime.messages.job import JobResult

MIN_PAUSE_S = 0.01
MAX_PAUSE_S = 0.1


class CollectResultBuffer:
    def __init__(self, checkpointed: bool) -> None:
        self.checkpointed = checkpointed
        self.version = ""
        self.offset = 0
        """Every result before this offset was received (and is acknowledged by the next request)."""
        self._received: deque[bytes] = deque()
        """Received, not yet handed out: offsets ``[offset - len(_received), offset)``."""
        self._visible_end = 0
        self.restarts = 0

    def next_request(self) -> bytes:
        return encode(CollectCoordinationRequest(self.version, self.offset))

    def on_response(self, response: CollectCoordinationResponse) -> int:
        """Take a response in; how many new results it brought."""
        if response.version != self.version:
            if self.version:
                self._sink_restarted(response.last_checkpointed_offset)
            self.version = response.version
        skip = self.offset - response.offset
        if skip < 0:
            raise IllegalStateTransitionError(
                f"collect sink sent results from offset {response.offset}, "
                f"the client holds up to {self.offset}"
            )
        new = response.results[skip:]
        self._received.extend(new)
        self.offset += len(new)
        if self.checkpointed:
            self._visible_end = max(self._visible_end, response.last_checkpointed_offset)
        else:
            self._visible_end = self.offset
        return len(new)

    def end_of_results(self) -> None:
        """The job finished: every received result is final."""
        self._visible_end = self.offset

    def take_visible(self) -> list[bytes]:
        handed = self.offset - len(self._received)
        n = min(self._visible_end, self.offset) - handed
        received = self._received
        return [received.popleft() for _ in range(n)] if n > 0 else []

    def _sink_restarted(self, last_checkpointed_offset: int) -> None:
        self.restarts += 1
        if self.checkpointed:
            target = max(self.offset - len(self._received), min(self.offset, last_checkpointed_offset))
            for _ in range(self.offset - target):
                self._received.pop()
            self.offset = target
        else:
            self._received.clear()
            self.offset = 0
            self._visible_end = 0


class CollectResultFetcher:
    """Polls the sink through the cluster client until results come or the job ends."""

    def __init__(
        self, client: ClusterClient, job_id: str, operator_id: str, accumulator_name: str, checkpointed: bool
    ) -> None:
        self._client = client
        self._job_id = job_id
        self._operator_id = operator_id
        self._accumulator_name = accumulator_name
        self.buffer = CollectResultBuffer(checkpointed)
        self.final: JobResult | None = None

    async def fetch(self) -> list[bytes] | None:
        """The next results the user may see; None once the job ended and every result was handed out."""
        pause = MIN_PAUSE_S
        buffer = self.buffer
        while True:
            visible = buffer.take_visible()
            if visible:
                return visible
            if self.final is not None:
                return None
            try:
                data = await self._client.send_coordination_request(
                    self._job_id, self._operator_id, buffer.next_request()
                )
            except JobError:
                data = b""  # not running (any more): the job's result tells what happened
            if data and buffer.on_response(decode_response(data)):
                pause = MIN_PAUSE_S
                continue
            result = await self._client.request_job_result(self._job_id, 0.0)
            if result is not None:
                if result.status == "FINISHED":
                    last = result.accumulator_results.get(self._accumulator_name)
                    if last:
                        buffer.on_response(decode_response(last))
                    buffer.end_of_results()
                self.final = result
                continue
            await asyncio.sleep(pause)
            pause = min(2 * pause, MAX_PAUSE_S)


class CollectResultIterator:
    """The results of one job, in order; closing it early cancels the job.

    A job that failed raises its JobExecutionError from ``next`` once the
    results before the failure were handed out (as Flink's iterator does).
    """

    def __init__(
        self,
        job_client: JobClient,
        job_id: str,
        job_name: str,
        operator_id: str,
        accumulator_name: str,
        checkpointed: bool,
    ) -> None:
        self._job_client = job_client
        self._job_name = job_name
        self._loop = job_client.loop
        self._fetcher = CollectResultFetcher(
            job_client.cluster_client, job_id, operator_id, accumulator_name, checkpointed
        )
        self._pending: deque[bytes] = deque()
        self._ended = False
        self._closed = False

    @property
    def job_client(self) -> JobClient:
        return self._job_client

    def has_next(self) -> bool:
        while not self._pending:
            if self._ended or self._closed:
                return False
            batch = self._loop.run(self._fetcher.fetch())
            if batch is None:
                self._ended = True
                self._job_client.get_job_execution_result().result()  # raises if the job failed
                self._raise_unless_finished()
                return False
            self._pending.extend(batch)
        return True

    def _raise_unless_finished(self) -> None:
        """For job clients whose result does not raise (``flott run -d``): the job's failure."""
        final = self._fetcher.final
        if final is None or final.status == "FINISHED":
            return
        if final.status == "CANCELED":
            raise JobCancellationError(f"Job '{self._job_name}' ({final.job_id}) was cancelled")
        raise describe_failure(self._job_name, final.job_id, final)

    def next(self) -> Any:
        if not self.has_next():
            raise StopIteration("No more data.")
        return pickle.loads(self._pending.popleft())

    def __iter__(self) -> CollectResultIterator:
        return self

    def __next__(self) -> Any:
        return self.next()

    def close(self) -> None:
        """Cancel the job unless it ended; wait until it did (an embedded cluster then shuts down)."""
        if self._closed:
            return
        self._closed = True
        self._pending.clear()
        if self._ended:
            return
        if self._fetcher.final is None:
            with contextlib.suppress(FlottError):
                self._job_client.cancel().result()
        with contextlib.suppress(FlottError):
            self._job_client.get_job_execution_result().result()


class CloseableIterator:
    """An iterator that is also closeable (PyFlink's ``CloseableIterator``): iterate, then ``close()``
    or use it as a context manager; closing before the end cancels the job."""

    def __init__(self, j_closeable_iterator: CollectResultIterator, type_info: Any = None) -> None:
        # ``j_closeable_iterator``: PyFlink's parameter name (there it is the Java iterator)
        self._iterator = j_closeable_iterator
        self._type_info = type_info

    def __iter__(self) -> CloseableIterator:
        return self

    def __next__(self) -> Any:
        return self.next()

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, exc_type: object, exc_val: object, exc_tb: object) -> None:
        self.close()

    def next(self) -> Any:
        return collected_value(self._iterator.next(), self._type_info)

    def close(self) -> None:
        self._iterator.close()


def collected_value(value: Any, type_info: Any) -> Any:
    """A result as PyFlink hands it back for the stream's declared type (its convert_to_python_obj):
    rows carry the declared field names (``f0, f1 ...`` when unnamed), tuples are tuples."""
    if isinstance(type_info, RowTypeInfo):
        types = type_info.get_field_types()
        if isinstance(value, Row):
            fields = [collected_value(v, t) for v, t in zip(value, types, strict=False)]
            row = Row(*fields)
            row.set_row_kind(value.get_row_kind())
        elif isinstance(value, (tuple, list)):
            row = Row(*(collected_value(v, t) for v, t in zip(value, types, strict=False)))
        else:
            return value
        row.set_field_names(type_info.get_field_names())
        return row
    if isinstance(type_info, TupleTypeInfo) and isinstance(value, (tuple, list, Row)):
        return tuple(collected_value(v, t) for v, t in zip(value, type_info.get_field_types(), strict=False))
    return value
