"""Encoders and (de)serialization schemas: how records become bytes in sinks and back in sources.

PyFlink's versions wrap Java objects; flott's carry the charset and do the work
in Python. ``Encoder.simple_string_encoder`` is what ``FileSink.for_row_format``
uses: one line per record, the record's Java-style text plus ``\\n``.
"""

from __future__ import annotations

import codecs
from typing import Any

__all__ = [
    "ByteArraySchema",
    "DeserializationSchema",
    "Encoder",
    "RowFieldExtractorSchema",
    "SerializationSchema",
    "SimpleStringSchema",
]


def _python_codec(charset: str) -> str:
    """Validate a Java charset name (``UTF-8``, ``ISO-8859-1``...) and return Python's codec name."""
    try:
        return codecs.lookup(charset).name
    except LookupError:
        raise ValueError(f"Unsupported charset: {charset}") from None


class SerializationSchema:
    """Turns a record into bytes (base class; subclasses implement :meth:`serialize`)."""

    def __init__(self, j_serialization_schema: Any = None) -> None:
        # The argument exists for signature compatibility with PyFlink and is ignored.
        pass

    def open(self) -> None:
        """Called once on the TaskExecutor before the first record."""

    def serialize(self, element: Any) -> bytes:
        raise NotImplementedError


class DeserializationSchema:
    """Turns bytes into a record (base class; subclasses implement :meth:`deserialize`)."""

    def __init__(self, j_deserialization_schema: Any = None) -> None:
        pass

    def open(self) -> None:
        """Called once on the TaskExecutor before the first record."""

    def deserialize(self, message: bytes) -> Any:
        raise NotImplementedError

    def is_end_of_stream(self, next_element: Any) -> bool:
        return False


class SimpleStringSchema(SerializationSchema, DeserializationSchema):
    """Strings encoded with a charset (UTF-8 by default)."""

    def __init__(self, charset: str = "UTF-8") -> None:
        super().__init__()
        self._charset = charset
        self._codec = _python_codec(charset)

    def get_charset(self) -> str:
        return self._charset

    def serialize(self, element: Any) -> bytes:
        return str(element).encode(self._codec)

    def deserialize(self, message: bytes) -> str:
        return message.decode(self._codec, "replace")


class ByteArraySchema(SerializationSchema, DeserializationSchema):
    """Raw bytes in, raw bytes out."""

    def serialize(self, element: Any) -> bytes:
        return bytes(element)

    def deserialize(self, message: bytes) -> bytes:
        return message


class RowFieldExtractorSchema(SerializationSchema):
    """One field of a Row, which must already be bytes (a message key or value, say).

    As Flink's: a missing row or a None field gives empty bytes; an index past the
    row's arity or a field that is not bytes is an error naming the index.
    """

    def __init__(self, field_index: int) -> None:
        if field_index < 0:
            raise ValueError(f"Field index must be non-negative, got: {field_index}")
        super().__init__()
        self._field_index = field_index

    def serialize(self, element: Any) -> bytes:
        if element is None:
            return b""
        if self._field_index >= len(element):
            raise ValueError(f"Cannot access field {self._field_index} in Row with arity {len(element)}")
        field = element[self._field_index]
        if field is None:
            return b""
        if not isinstance(field, bytes | bytearray):
            raise ValueError(
                f"Field at index {self._field_index} must be of type bytes, but was {type(field).__name__}"
            )
        return bytes(field)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RowFieldExtractorSchema) and other._field_index == self._field_index

    def __hash__(self) -> int:
        return self._field_index


class Encoder:
    """How a row-format file sink writes one record: its text in ``charset`` followed by ``\\n``."""

    def __init__(self, charset_name: str = "UTF-8") -> None:
        self._charset = charset_name
        self._codec = _python_codec(charset_name)

    @staticmethod
    def simple_string_encoder(charset_name: str = "UTF-8") -> Encoder:
        """Java's ``SimpleStringEncoder``: ``toString`` of the record, encoded, then a newline."""
        return Encoder(charset_name)

    @property
    def charset(self) -> str:
        return self._charset

    @property
    def codec(self) -> str:
        """Python codec name for :attr:`charset`."""
        return self._codec

    def encode(self, text_line: str) -> bytes:
        return (text_line + "\n").encode(self._codec)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Encoder) and other._codec == self._codec

    def __hash__(self) -> int:
        return hash(self._codec)

    def __repr__(self) -> str:
        return f"Encoder.simple_string_encoder({self._charset!r})"
