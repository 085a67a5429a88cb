"""SlotSharingGroup and MemorySize (PyFlink's ``pyflink.datastream.slot_sharing_group``).

Defined in ``flott.api.common.slot_sharing_group`` (Flink's ``api.common.operators``), where the
graph translation reads them too; handed out here under PyFlink's import path.
"""

from __future__ import annotations

from flott.api.common.slot_sharing_group import MemorySize, SlotSharingGroup

__all__ = ["MemorySize", "SlotSharingGroup"]
