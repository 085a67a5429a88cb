"""The messages between the collecting client and the collect sink (Flink's CollectCoordinationRequest
and CollectCoordinationResponse), as msgpack bytes the JobManager forwards without decoding.

Offsets count results since the sink attempt started from its state:
``offset`` in a request says "I hold every result before this one"; the sink
may then drop them. ``version`` identifies one sink attempt: a restarted sink
has a new version, so the client knows to fall back to what was checkpointed.
"""

from __future__ import annotations

import msgspec

ACCUMULATOR_PREFIX = "dataStreamCollect_"
"""Name prefix of the accumulator carrying a finished sink's last results (Flink's)."""


class CollectCoordinationRequest(msgspec.Struct, frozen=True, array_like=True):
    version: str
    offset: int


class CollectCoordinationResponse(msgspec.Struct, frozen=True, array_like=True):
    """``results`` (pickled records) start at ``offset``; ``last_checkpointed_offset`` is the end of
    what a completed checkpoint covers (every result before it survives a restart)."""

    version: str
    last_checkpointed_offset: int
    offset: int
    results: list[bytes]


_REQUEST = msgspec.msgpack.Decoder(CollectCoordinationRequest)
_RESPONSE = msgspec.msgpack.Decoder(CollectCoordinationResponse)
_ENCODER = msgspec.msgpack.Encoder()


def encode(message: CollectCoordinationRequest | CollectCoordinationResponse) -> bytes:
    return _ENCODER.encode(message)


def decode_request(data: bytes) -> CollectCoordinationRequest:
    return _REQUEST.decode(data)


def decode_response(data: bytes) -> CollectCoordinationResponse:
    return _RESPONSE.decode(data)
