"""RuntimeExecutionMode (PyFlink's ``pyflink.datastream.execution_mode``).

The mode decides how the runtime schedules and what keyed aggregations emit:
STREAMING emits every update, BATCH only final results, AUTOMATIC picks BATCH
when every source is bounded. The JobGraph generator resolves AUTOMATIC so the
cluster only ever sees STREAMING or BATCH.
"""

from __future__ import annotations

from enum import Enum


class RuntimeExecutionMode(Enum):
    STREAMING = 0
    BATCH = 1
    AUTOMATIC = 2
