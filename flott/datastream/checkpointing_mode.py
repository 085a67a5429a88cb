"""CheckpointingMode (PyFlink's ``pyflink.datastream.checkpointing_mode``)."""

from __future__ import annotations

from enum import Enum


class CheckpointingMode(Enum):
    """Consistency guarantee of checkpoints; stored as ``execution.checkpointing.mode``."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1
