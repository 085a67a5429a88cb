"""The check of an operator's output against the type the program declared for it.

PyFlink serialises records with the declared type's Java serializer, so a record that does not fit
fails the job there; flott checks the same at the places PyFlink serialises (a task's outputs, a
chained sink's input) and fails with PyFlink's error type. Below the tasks floor because sinks
(operators) build the check for their input as record writers do for their outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flott.common.type_conversion import (
    BatchCheck,
    OutputTypeMismatch,
    ValueFix,
    java_serializer_takes_null,
    output_type_check,
    output_value_fix,
)
from flott.errors import UserCodeError


class DeclaredOutputType:
    """The check of one output (main or side) against its declared type, with the error to raise."""

    __slots__ = ("_check", "_producer", "_task_name", "_timestamped", "_type_info", "none_allowed")

    def __init__(
        self,
        check: BatchCheck,
        type_info: Any,
        producer: str,
        task_name: str,
        none_allowed: bool = False,
        timestamped: bool = False,
    ) -> None:
        self._check = check
        self._timestamped = timestamped
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
        if check is None:
            return None
        return cls(check, type_info, producer, task_name, none_allowed, timestamped)

    def apply(self, batch: list[Any]) -> list[Any]:
        try:
            return self._check(batch)
        except OutputTypeMismatch as e:
            raise declared_type_error(e, self._producer, self._type_info, self._task_name) from None

    def fold_into(self, fold: Callable[[Any, ValueFix], bool]) -> bool:
        """Hand the check to the loop that visits the records anyway (a hash partitioner's):
        ``fold(type_info, fix)`` generates the per-record check into that loop, with ``fix``
        converting or refusing (with this output's error) a record that does not fit as it is.
        True when ``fold`` took it: :meth:`apply` must then not run as well."""
        fix = output_value_fix(
            self._type_info,
            none_allowed=self.none_allowed,
            timestamped=self._timestamped,
            on_mismatch=lambda e: declared_type_error(e, self._producer, self._type_info, self._task_name),
        )
        return fix is not None and fold(self._type_info, fix)


def declared_type_error(
    e: OutputTypeMismatch, producer: str, type_info: Any, task_name: str
) -> UserCodeError:
    """The user's mistake, with PyFlink's error type; no frame of it is the user's."""
    message = (
        f"{e.detail}: '{producer}' emitted {e.value!r}, which does not fit its declared type {type_info!r}"
    )
    return UserCodeError(e.error_type.__name__, message, "", task_name)
