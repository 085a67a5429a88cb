"""Ready-made retry predicates for async I/O (PyFlink's ``pyflink.datastream.async_retry_predicates``).

Pass them as the ``result_predicate`` / ``exception_predicate`` of
``AsyncRetryStrategy.fixed_delay(...)`` or ``exponential_backoff(...)``; the
type predicate takes its expected type through ``functools.partial``.
"""

from __future__ import annotations

from typing import Any


def empty_result_predicate(result: list[Any] | None) -> bool:
    """Retry when ``async_invoke`` returned nothing (None or an empty list)."""
    return result is None or len(result) == 0


def has_exception_predicate(error: BaseException | None) -> bool:
    """Retry on any exception."""
    return error is not None


def exception_type_predicate(error: BaseException | None, expected_error_type: type) -> bool:
    """Retry on exceptions of ``expected_error_type`` (bind it with ``functools.partial``)."""
    return isinstance(error, expected_error_type)
