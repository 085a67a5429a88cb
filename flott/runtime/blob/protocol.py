"""What crosses the wire between a BlobServer and a BlobCache, and the key format.

A blob's key is the sha256 of its bytes (hex), so a TaskExecutor can verify
what it downloaded without trusting the transport, and the same file
submitted twice for one job is stored once.

The fetch protocol is deliberately tiny (one request per TCP connection, so
no framing state survives a failure)::

    client: GET <job_id> <blob_key>\\n
    server: OK <size>\\n<size bytes>          or      ERR <message>\\n

Flink's BlobServer speaks a binary PUT/GET/DELETE protocol; flott's clients
never *put* over the network (uploads arrive through REST ``POST /jobs`` and
the Dispatcher stores them locally), so only GET exists.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from flott.errors import ConfigurationError

BLOB_SERVER_PORT = "blob.server.port"
"""Flink's key: the BlobServer's port, a port range ``50100-50200`` or ``0`` (any free port)."""
BLOB_STORAGE_DIRECTORY = "blob.storage.directory"
"""Flink's key: the base directory of the BlobServer's store and of every BlobCache (default: tmp)."""
BLOB_FETCH_RETRIES = "blob.fetch.retries"
"""Flink's key: how often a BlobCache retries a failed download."""
BLOB_FETCH_NUM_CONCURRENT = "blob.fetch.num-concurrent"
"""Flink's key: downloads a BlobServer serves at the same time (more wait)."""

CHUNK_SIZE = 256 * 1024
MAX_REQUEST_LINE = 512

_KEY = re.compile(r"^[0-9a-f]{64}$")
_JOB_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def is_blob_key(key: str) -> bool:
    return bool(_KEY.match(key))


def is_job_id(job_id: str) -> bool:
    """Job ids become directory names on both sides: only a safe alphabet is accepted."""
    return bool(_JOB_ID.match(job_id))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK_SIZE):
            digest.update(chunk)
    return digest.hexdigest()


def encode_request(job_id: str, key: str) -> bytes:
    return f"GET {job_id} {key}\n".encode("ascii")


def decode_request(line: bytes) -> tuple[str, str]:
    """``(job_id, key)`` of a request line; ValueError for anything else."""
    parts = line.decode("ascii", "replace").strip().split(" ")
    if len(parts) != 3 or parts[0] != "GET" or not is_job_id(parts[1]) or not is_blob_key(parts[2]):
        raise ValueError(f"malformed blob request {line[:80]!r}")
    return parts[1], parts[2]


def parse_port_range(text: str) -> list[int]:
    """``"0"``, ``"50100"`` or ``"50100-50200"`` (Flink's port range syntax, also comma lists)."""
    ports: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            low, sep, high = part.partition("-")
            first = int(low)
            last = int(high) if sep else first
            if not 0 <= first <= last <= 65535:
                raise ValueError(part)
            ports.extend(range(first, last + 1))
    except ValueError:
        raise ConfigurationError(
            f"{BLOB_SERVER_PORT}: expected a port, a range like 50100-50200, or 0, got {text!r}"
        ) from None
    return ports or [0]
