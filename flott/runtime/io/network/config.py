"""Configuration and channel descriptors of the data-exchange layer.

Kept apart from the environment so that deployment descriptors (built by the
JobMaster, which never runs the exchange layer) can carry
:class:`InputChannelSpec` without importing sockets or threads.
"""

from __future__ import annotations

import msgspec

from flott.errors import ConfigurationError


class NetworkConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Settings of one TaskExecutor's ShuffleEnvironment (Flink: NettyShuffleEnvironmentConfiguration)."""

    bind_host: str = "127.0.0.1"
    """Interface the data server listens on (``0.0.0.0`` for all)."""
    advertised_host: str = "127.0.0.1"
    """Host other TaskExecutors connect to; part of the data address handed out."""
    port: int = 0
    """Data port; 0 picks any free port (the actual one is in the address ``start()`` returns)."""
    buffers_per_channel: int = 4
    """Credits per remote channel and max buffers queued per subpartition (Flink: buffers-per-channel).

    Bounds memory: a subpartition holds at most this many buffers and a remote
    consumer at most this many more, so a slow consumer slows its producer.
    """
    request_timeout_s: float = 10.0
    """How long a partition request waits for the producer to register the partition.

    Producers and consumers are deployed concurrently, so a consumer's request
    may arrive before the producer task created its partition. The environment
    that holds (or will hold) the partition applies its own value: the
    producer's for a remote request, the consumer's own for a local channel.
    """
    connect_timeout_s: float = 10.0
    """How long opening a TCP connection to a producer's TaskExecutor may take."""
    max_frame_bytes: int = 1 << 30
    """Largest accepted frame; a bigger length prefix means a corrupt or foreign stream."""
    blocking_partition_memory_bytes: int = 4 << 20
    """Pickled bytes a blocking result partition keeps in memory; the rest goes to its spill file."""
    spill_dir: str = ""
    """Where blocking partitions spill (the TaskExecutor's ``io.tmp.dirs``); empty: the system's."""

    def __post_init__(self) -> None:
        if self.buffers_per_channel < 1:
            raise ConfigurationError(f"buffers_per_channel must be >= 1, got {self.buffers_per_channel}")
        if not 0 <= self.port <= 65535:
            raise ConfigurationError(f"port must be in 0..65535, got {self.port}")
        if self.request_timeout_s < 0 or self.connect_timeout_s <= 0:
            raise ConfigurationError("request_timeout_s must be >= 0 and connect_timeout_s > 0")
        if self.max_frame_bytes < 1024:
            raise ConfigurationError(f"max_frame_bytes must be >= 1024, got {self.max_frame_bytes}")


class InputChannelSpec(msgspec.Struct, frozen=True):
    """Where one input channel reads from: a subpartition of a producer's result partition.

    ``producer_address`` is the producer TaskExecutor's data address
    (``host:port`` as returned by :meth:`ShuffleEnvironment.start`). When it is
    the consumer's own address, the channel is local (no socket, no pickle).
    """

    producer_address: str
    partition_id: str
    subpartition_index: int


def parse_address(address: str) -> tuple[str, int]:
    """Split ``host:port`` (IPv6 hosts may be bracketed) into its parts."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigurationError(f"data address must be 'host:port', got {address!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)
