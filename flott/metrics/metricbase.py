"""PyFlink's metric interfaces (``pyflink.metrics.metricbase``), same names and signatures."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable


class MetricGroup(ABC):
    """A named container for metrics and further metric subgroups."""

    @abstractmethod
    def add_group(self, name: str, extra: str | None = None) -> MetricGroup:
        """A subgroup ``name``; with ``extra``, a key group ``name`` holding the value group ``extra``
        (returned; it defines the user variable ``<name>``)."""

    @abstractmethod
    def counter(self, name: str) -> Counter:
        """Register (or return the already registered) counter ``name``."""

    @abstractmethod
    def gauge(self, name: str, obj: Callable[[], int]) -> None:
        """Register a gauge whose value is ``obj()`` each time the metric is read."""

    @abstractmethod
    def meter(self, name: str, time_span_in_seconds: int = 60) -> Meter:
        """Register a meter whose rate is averaged over ``time_span_in_seconds``."""

    @abstractmethod
    def distribution(self, name: str) -> Distribution:
        """Register a distribution (count, sum, min, max of the updated values)."""


class Metric(ABC):  # noqa: B024 - PyFlink's marker base class has no abstract methods either
    """Base interface of a metric object."""


class Counter(Metric, ABC):
    @abstractmethod
    def inc(self, n: int = 1) -> None: ...

    @abstractmethod
    def dec(self, n: int = 1) -> None: ...

    @abstractmethod
    def get_count(self) -> int: ...


class Meter(Metric, ABC):
    @abstractmethod
    def mark_event(self, value: int = 1) -> None: ...

    @abstractmethod
    def get_count(self) -> int: ...


class Distribution(Metric, ABC):
    @abstractmethod
    def update(self, value: int) -> None: ...
