"""The check of an operator's output against the type the program declared for it.

PyFlink serialises records with the declared type's Java serializer, so a record that does not fit
fails the job there; flott checks the same at the places PyFlink serialises (a task's outputs, a
chained sink's input) and fails with PyFlink's error type. Below the tasks floor because sinks
(operators) build the check for their input as record writers do for their outputs.
"""

from __future__ import annotations

from typing import Any

from flott.common.type_conversion import (
    BatchCheck,
    OutputTypeMismatch,
    java_serializer_takes_null,
    output_type_check,
)
from flott.errors import UserCodeError


class DeclaredOutputType:
    """The check of one output (main or side) against its declared type, with the error to raise."""

    __slots__ = ("_check", "_producer", "_task_name", "_type_info", "none_allowed")

    def __init__(
        self, check: BatchCheck, type_info: Any, producer: str, task_name: str, none_allowed: bool = False
    ) -> None:
        self._check = check
        self.none_allowed = none_allowed
        """Whether a ``None`` record passes the check (what an encoder of the checked records must carry)."""
        self._type_info = type_info
        self._producer = producer
        self._task_name = task_name

    @classmethod
    def of(
        cls,
        type_info: Any,
        producer: str,
        task_name: str,
        *,
        keyed: bool,
        timestamped: bool,
        none_allowed: bool | None = None,
    ) -> DeclaredOutputType | None:
        """None when there is nothing to check. ``keyed``: the records travel as a field of the
        key row PyFlink's key_by builds, where ``None`` is a ``null`` field; else ``None`` passes
        where Flink's serializer of the type writes ``null`` (or as ``none_allowed`` says)."""
        if none_allowed is None:
            none_allowed = keyed or java_serializer_takes_null(type_info)
        check = output_type_check(type_info, none_allowed=none_allowed, timestamped=timestamped)
        return None if check is None else cls(check, type_info, producer, task_name, none_allowed)

    def apply(self, batch: list[Any]) -> list[Any]:
        try:
            return self._check(batch)
        except OutputTypeMismatch as e:
            raise declared_type_error(e, self._producer, self._type_info, self._task_name) from None


def declared_type_error(
    e: OutputTypeMismatch, producer: str, type_info: Any, task_name: str
) -> UserCodeError:
    """The user's mistake, with PyFlink's error type; no frame of it is the user's."""
    message = (
        f"{e.detail}: '{producer}' emitted {e.value!r}, which does not fit its declared type {type_info!r}"
    )
    return UserCodeError(e.error_type.__name__, message, "", task_name)
