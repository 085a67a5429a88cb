"""The data-exchange layer: result partitions, input gates, and the TCP data plane between TaskExecutors.

Start at :class:`ShuffleEnvironment` (one per TaskExecutor); tasks see only
the blocking contract of :mod:`flott.runtime.io.network.api`.
"""

from flott.runtime.io.network.api import ChannelEvent, EndOfPartition, InputGate, ResultPartitionWriter
from flott.runtime.io.network.config import InputChannelSpec, NetworkConfig
from flott.runtime.io.network.input_gate import SingleInputGate
from flott.runtime.io.network.partition import ResultPartition
from flott.runtime.io.network.shuffle_environment import NetworkMetrics, ShuffleEnvironment

__all__ = [
    "ChannelEvent",
    "EndOfPartition",
    "InputChannelSpec",
    "InputGate",
    "NetworkConfig",
    "NetworkMetrics",
    "ResultPartition",
    "ResultPartitionWriter",
    "ShuffleEnvironment",
    "SingleInputGate",
]
