"""The REST tests' session cluster (a MiniCluster with real TaskExecutors behind a REST endpoint)."""

from tests.rest.conftest import no_leftover_processes, rest_cluster

__all__ = ["no_leftover_processes", "rest_cluster"]
