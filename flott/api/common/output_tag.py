"""OutputTag (Flink's ``org.apache.flink.util.OutputTag``): names a side output.

PyFlink's ``pyflink.datastream.output_tag`` re-exports it (``flott.datastream.output_tag``); it
lives on this floor because the runtime's operators and record writers route by it too.

Tags are plain data compared by id (and declared type), so a tag created on the
client and the unpickled copy inside a task identify the same side output.
A process function emits to one by yielding ``(output_tag, value)`` (or calling
``ctx.output(output_tag, value)``); windows send late data to one; the records
are read with ``DataStream.get_side_output(output_tag)``.
"""

from __future__ import annotations

from typing import Any

from flott.common.typeinfo import Types


class OutputTag:
    def __init__(self, tag_id: str, type_info: Any = None) -> None:
        if not isinstance(tag_id, str) or not tag_id:
            raise ValueError("OutputTag tag_id cannot be None or empty string")
        self.tag_id = tag_id
        if isinstance(type_info, list):
            type_info = Types.ROW(type_info)
        self.type_info = type_info

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, OutputTag)
            and self.tag_id == other.tag_id
            and repr(self.type_info) == repr(other.type_info)
        )

    def __hash__(self) -> int:
        return hash(self.tag_id)

    def __repr__(self) -> str:
        return f"OutputTag({self.tag_id!r}, {self.type_info!r})"


def side_output_of(value: Any) -> tuple[OutputTag, Any] | None:
    """``(tag, value)`` if a process function yielded a side output, else None.

    PyFlink process functions emit side outputs by yielding ``(output_tag, value)``;
    the runtime routes such records to the consumers of ``get_side_output(output_tag)``.
    """
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], OutputTag):
        return value[0], value[1]
    return None
