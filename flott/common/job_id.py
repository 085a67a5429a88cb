"""``JobID``: a job's 16-byte identifier, shown as 32 lowercase hex characters like Flink's."""

from __future__ import annotations

import os

__all__ = ["JobID"]


class JobID:
    """Unique identifier of a job (Flink's ``JobID``: two longs, printed as 32 hex chars)."""

    __slots__ = ("_bytes",)

    def __init__(self, value: bytes | str | None = None) -> None:
        if value is None:
            raw = os.urandom(16)
        elif isinstance(value, (bytes, bytearray)):
            raw = bytes(value)
        elif isinstance(value, str):
            raw = _parse_hex(value)
        else:
            raise TypeError(f"JobID needs 16 bytes or 32 hex chars, got {type(value).__name__}")
        if len(raw) != 16:
            raise ValueError(f"JobID must be 16 bytes, got {len(raw)}")
        self._bytes = raw

    @staticmethod
    def generate() -> JobID:
        return JobID()

    @staticmethod
    def from_hex_string(hex_string: str) -> JobID:
        """Parse 32 hex chars (what ``str(job_id)`` and the REST API give)."""
        return JobID(_parse_hex(hex_string))

    @staticmethod
    def from_bytes(raw: bytes) -> JobID:
        return JobID(raw)

    def to_bytes(self) -> bytes:
        return self._bytes

    def to_hex_string(self) -> str:
        return self._bytes.hex()

    def get_upper_part(self) -> int:
        return int.from_bytes(self._bytes[:8], "big", signed=True)

    def get_lower_part(self) -> int:
        return int.from_bytes(self._bytes[8:], "big", signed=True)

    def __str__(self) -> str:
        return self._bytes.hex()

    def __repr__(self) -> str:
        return f"JobID('{self._bytes.hex()}')"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JobID) and self._bytes == other._bytes

    def __hash__(self) -> int:
        return hash(self._bytes)

    def __lt__(self, other: JobID) -> bool:
        return self._bytes < other._bytes

    def __reduce__(self) -> tuple[type[JobID], tuple[bytes]]:
        return JobID, (self._bytes,)


def _parse_hex(text: str) -> bytes:
    if len(text) != 32:
        raise ValueError(f"Cannot parse JobID from {text!r}: expected 32 hex characters")
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"Cannot parse JobID from {text!r}: not hexadecimal") from None
