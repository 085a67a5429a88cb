"""Wire format, configuration and the contract types (no sockets needed)."""

from __future__ import annotations

import pickle
import random

import pytest

from flott.errors import ConfigurationError, DataExchangeError
from flott.runtime.io.network import (
    InputGate,
    NetworkConfig,
    ResultPartition,
    ResultPartitionWriter,
    SingleInputGate,
    protocol,
)
from flott.runtime.io.network.config import parse_address


def sample_stream() -> tuple[bytes, list[tuple[int, int, bytes]]]:
    frames = [
        protocol.encode_partition_request(1, "job-ds-0-0", 3, 4),
        protocol.encode_buffer(7, [(i, "x" * i) for i in range(300)]),
        protocol.encode_event(7, {"watermark": 12}),
        protocol.encode_add_credit(7, 2),
        protocol.encode_end_of_partition(7),
        protocol.encode_error(9, "partition gone ✗"),
        protocol.encode_eop_ack(7),
        protocol.encode_cancel_request(8),
    ]
    expected = [protocol.HEADER.unpack_from(f) for f in frames]
    return b"".join(frames), [
        (t, r, f[protocol.HEADER_SIZE :]) for (_, t, r), f in zip(expected, frames, strict=True)
    ]


@pytest.mark.parametrize("chunking", ["whole", "bytewise", "random"])
def test_decoder_reassembles_frames_from_any_chunking(chunking: str) -> None:
    stream, expected = sample_stream()
    if chunking == "whole":
        chunks = [stream]
    elif chunking == "bytewise":
        chunks = [stream[i : i + 1] for i in range(len(stream))]
    else:
        rng = random.Random(3)
        chunks, pos = [], 0
        while pos < len(stream):
            step = rng.randint(1, 700)
            chunks.append(stream[pos : pos + step])
            pos += step
    decoder = protocol.FrameDecoder(1 << 20)
    got = [(t, r, bytes(p)) for chunk in chunks for t, r, p in decoder.feed(chunk)]
    assert got == expected
    assert pickle.loads(got[1][2]) == [(i, "x" * i) for i in range(300)]
    assert protocol.decode_partition_request(got[0][2]) == ("job-ds-0-0", 3, 4)
    assert protocol.decode_add_credit(got[3][2]) == 2
    assert protocol.decode_error(got[5][2]) == "partition gone ✗"


def test_decoder_rejects_oversized_frames() -> None:
    decoder = protocol.FrameDecoder(1024)
    with pytest.raises(DataExchangeError, match="exceeds the limit"):
        decoder.feed(protocol.HEADER.pack(1 << 30, protocol.BUFFER, 1) + b"x")


def test_malformed_control_messages_raise_data_exchange_error() -> None:
    with pytest.raises(DataExchangeError):
        protocol.decode_partition_request(b"\xff\x00")
    with pytest.raises(DataExchangeError):
        protocol.decode_add_credit(b"\x00")


def test_config_validation_and_addresses() -> None:
    with pytest.raises(ConfigurationError):
        NetworkConfig(buffers_per_channel=0)
    with pytest.raises(ConfigurationError):
        NetworkConfig(port=70000)
    assert parse_address("127.0.0.1:6121") == ("127.0.0.1", 6121)
    assert parse_address("[::1]:80") == ("::1", 80)
    with pytest.raises(ConfigurationError):
        parse_address("nohost")


def test_implementations_satisfy_the_task_contract() -> None:
    """Statically checked by mypy: the classes tasks get implement api.py's protocols."""
    partition = ResultPartition("p", 2, 4)
    writer: ResultPartitionWriter = partition
    gate: InputGate = SingleInputGate([])
    assert writer.num_subpartitions == 2 and gate.num_channels == 0
    with pytest.raises(TypeError):
        partition.broadcast_event([1, 2])
    partition.release()


def test_a_consumer_of_a_failed_producer_names_the_producers_failure() -> None:
    """Whichever task's report reaches the JobMaster first, the job's failure says why: the
    consumer of a failed producer's partition fails naming the producer's own error."""
    failed = ResultPartition("failed", 1, 4)
    failed.emit(0, ["record"])
    failed.release("UserCodeError: the Partitioner returned partition 3")
    with pytest.raises(
        DataExchangeError, match="its producer failed: UserCodeError: the Partitioner returned"
    ):
        failed.subpartition(0).take_one()
    assert "the Partitioner returned" in failed.subpartition(0).take_many(8)[1]

    cancelled = ResultPartition("cancelled", 1, 4)
    cancelled.release()
    assert (
        cancelled.subpartition(0).take_many(8)[1]
        == "result partition cancelled#0 was released by its producer"
    )
