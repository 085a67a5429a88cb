"""Retry strategies for async I/O (PyFlink's ``pyflink.datastream.async_retry_strategies``).

Defined with their contracts in ``flott.api.streaming.async_retry``; handed out here under PyFlink's
import path.
"""

from __future__ import annotations

from flott.api.streaming.async_retry import (
    NO_RETRY_STRATEGY,  # noqa: F401 - PyFlink's module defines it beside __all__
    ExponentialBackoffDelayRetryStrategy,
    FixedDelayRetryStrategy,
    NoRetryStrategy,
    RetryPredicate,
)

__all__ = [
    "ExponentialBackoffDelayRetryStrategy",
    "FixedDelayRetryStrategy",
    "NoRetryStrategy",
    "RetryPredicate",
]
