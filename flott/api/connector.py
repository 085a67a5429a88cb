"""Connector contracts the graph translation needs (Flink's ``api.connector.source.Boundedness``).

Whether a source ends decides the job's execution mode (BATCH needs every source bounded) and what
a cached stream's read-back is; the translation in ``flott.graph`` asks it without importing the
connectors, which re-export it (``flott.datastream.connectors``).
"""

from __future__ import annotations

from enum import Enum

__all__ = ["Boundedness"]


class Boundedness(Enum):
    BOUNDED = "BOUNDED"
    CONTINUOUS_UNBOUNDED = "CONTINUOUS_UNBOUNDED"
