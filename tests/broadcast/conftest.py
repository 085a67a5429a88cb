"""The embedded-cluster fixture of the end-to-end tests, for the broadcast and partitioning jobs."""

from tests.e2e.conftest import embedded

__all__ = ["embedded"]
