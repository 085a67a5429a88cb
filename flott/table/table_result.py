"""``TableResult``: what executing a statement or a table gives back, and Flink's tableau printing.

``print()`` writes Flink's tableau format: column widths derived from the column types (as
``PrintUtils.columnWidthsByType``: BIGINT 20, INT 11, BOOLEAN 5, TIMESTAMP(3) 23, strings and
doubles the 30-character maximum, at least ``<NULL>``'s 6 and the name's length), values right
aligned, longer values cut to 27 characters and ``...``; in streaming mode an ``op`` column with
each row's kind (+I/-U/+U/-D); ``N rows in set`` (``1 row in set``, ``Empty set``) at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from flott.common.types import Row, RowKind
from flott.table.schema import TableSchema
from flott.table.types import NULL_COLUMN, BigIntType, DataType, VarCharType

__all__ = ["ResultKind", "TableResult"]


class ResultKind:
    SUCCESS = "SUCCESS"
    SUCCESS_WITH_CONTENT = "SUCCESS_WITH_CONTENT"


_KINDS = (RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE)


class CloseableIterator:
    """Rows of a running job; ``close()`` (or leaving ``with``) cancels what is left of it."""

    def __init__(self, records: Any) -> None:
        self._records = records

    def __iter__(self) -> CloseableIterator:
        return self

    def __next__(self) -> Row:
        kind, vals = next(self._records)
        row = Row(*vals)  # positional, as PyFlink's collect() gives them
        row.set_row_kind(_KINDS[kind])
        return row

    def close(self) -> None:
        close = getattr(self._records, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TableResult:
    def __init__(
        self,
        names: list[str],
        types: list[DataType],
        *,
        streaming: bool = False,
        records: Callable[[], Iterator[Any]] | None = None,
        job_client: Any = None,
        rows: list[tuple[Any, ...]] | None = None,
        kind: str = ResultKind.SUCCESS_WITH_CONTENT,
    ) -> None:
        self._names, self._types = names, types
        self._streaming = streaming
        self._records = records
        self._job_client = job_client
        self._rows = rows
        self._kind = kind

    @staticmethod
    def ok() -> TableResult:
        return TableResult(
            ["result"], [VarCharType(VarCharType.MAX_LENGTH)], rows=[("OK",)], kind=ResultKind.SUCCESS
        )

    @staticmethod
    def of_insert(sink_names: list[str], job_client: Any) -> TableResult:
        return TableResult(
            sink_names,
            [BigIntType(False)] * len(sink_names),
            job_client=job_client,
            rows=[tuple(-1 for _ in sink_names)],
        )

    def get_job_client(self) -> Any:
        return self._job_client

    def wait(self, timeout_ms: int | None = None) -> None:
        if self._job_client is not None:
            future = self._job_client.get_job_execution_result()
            future.result() if timeout_ms is None else future.result(timeout_ms / 1000)

    def get_table_schema(self) -> TableSchema:
        return TableSchema(self._names, self._types)

    def get_resolved_schema(self) -> TableSchema:
        return self.get_table_schema()

    def get_result_kind(self) -> str:
        return self._kind

    def _iterate(self) -> Iterator[Any]:
        if self._records is not None:
            return self._records()
        return iter([(0, r) for r in self._rows or []])

    def collect(self) -> CloseableIterator:
        return CloseableIterator(self._iterate())

    def print(self) -> None:
        if self._kind == ResultKind.SUCCESS:
            print("OK")
            return
        with_op = self._streaming
        widths = [
            max(len(n), t.print_width(), len(NULL_COLUMN))
            for n, t in zip(self._names, self._types, strict=True)
        ]
        if with_op:
            widths.insert(0, 2)
        border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

        def line(cells: list[str]) -> str:
            out = []
            for c, w in zip(cells, widths, strict=True):
                if len(c) > w:
                    c = c[: w - 3] + "..."
                out.append(" " + c.rjust(w) + " ")
            return "|" + "|".join(out) + "|"

        count = 0
        records = self._iterate()
        try:
            for kind, vals in records:
                if count == 0:
                    print(border)
                    print(line((["op"] if with_op else []) + list(self._names)))
                    print(border)
                cells = [
                    NULL_COLUMN if v is None else t.format_sql(v)
                    for t, v in zip(self._types, vals, strict=True)
                ]
                print(line(([str(_KINDS[kind])] if with_op else []) + cells), flush=False)
                count += 1
        finally:
            close = getattr(records, "close", None)
            if close is not None:
                close()
        if count == 0:
            print("Empty set")
            return
        print(border)
        print("1 row in set" if count == 1 else f"{count} rows in set", flush=True)
