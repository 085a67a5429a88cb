"""Exceptions on the REST wire: Flink's ``SerializedThrowable`` JSON, carrying flott's WireError.

Flink writes ``{"class", "stack-trace", "serialized-throwable"}`` where the
last is base64 of a Java-serialised ``org.apache.flink.util.SerializedThrowable``,
and Flink's Java client (``bin/flink``, RestClusterClient) Java-deserialises it
whenever a ``failure-cause`` comes back (a failed savepoint, a failed job).
It cannot read anything else: an unreadable ``serialized-throwable`` leaves it
waiting until ``client.timeout`` and then reporting a bare TimeoutException.

So flott writes a real Java serialisation stream of a ``SerializedThrowable``
(the few bytes of Java's serialisation format it needs are written here, no
JVM involved): its message and class name are the error's, its
``fullStringifiedStackTrace`` is the text of ``stack-trace``, and its
``serializedException`` bytes are the msgpack-encoded
:class:`~flott.runtime.rpc.service.WireError`. Flink's client shows
``flott.errors.<Type>: <message>`` (it cannot rebuild the inner bytes and falls
back to the SerializedThrowable itself, as it does for any class it does not
have); flott's RestClusterClient takes the WireError out of the same bytes and
rebuilds the exact error, including a user function's type, message and the
worker's traceback. Used by the server (job results, async operations) and
the client.
"""

from __future__ import annotations

import base64
import binascii
import struct
from typing import Any

import msgspec

from flott.errors import WireError, error_to_wire
from flott.rest.messages.common import SerializedThrowable

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(WireError)

# -- the subset of Java's object serialisation format a SerializedThrowable needs ----------------

_MAGIC = b"\xac\xed\x00\x05"
_TC_NULL, _TC_CLASSDESC, _TC_OBJECT, _TC_STRING, _TC_ARRAY, _TC_ENDBLOCKDATA, _TC_LONGSTRING = (
    0x70, 0x72, 0x73, 0x74, 0x75, 0x78, 0x7C,
)  # fmt: skip
_SC_WRITE_METHOD, _SC_SERIALIZABLE = 0x01, 0x02
# serialVersionUIDs, as `serialver` reports them for Flink 2.3.0 and Java 17.
_UID_SERIALIZED_THROWABLE = 7284183123441947635
_UID_EXCEPTION = -3387516993124229948
_UID_THROWABLE = -3042686055658047285
_UID_BYTE_ARRAY = -5984413125824719648
_STRING_TYPE = "Ljava/lang/String;"


def _modified_utf8(text: str) -> bytes:
    """Java's modified UTF-8: UTF-16 code units, NUL as two bytes, surrogates as three bytes each."""
    units = text.encode("utf-16-be", "surrogatepass")
    out = bytearray()
    for (unit,) in struct.iter_unpack(">H", units):
        if 0 < unit < 0x80:
            out.append(unit)
        elif unit < 0x800:
            out += bytes((0xC0 | unit >> 6, 0x80 | unit & 0x3F))
        else:
            out += bytes((0xE0 | unit >> 12, 0x80 | unit >> 6 & 0x3F, 0x80 | unit & 0x3F))
    return bytes(out)


def _utf(text: str) -> bytes:
    data = _modified_utf8(text)
    return struct.pack(">H", len(data)) + data


def _string(text: str) -> bytes:
    data = _modified_utf8(text)
    if len(data) <= 0xFFFF:
        return bytes((_TC_STRING,)) + struct.pack(">H", len(data)) + data
    return bytes((_TC_LONGSTRING,)) + struct.pack(">q", len(data)) + data


def _class_desc(name: str, uid: int, flags: int, fields: list[tuple[str, str, str]], parent: bytes) -> bytes:
    """A new class descriptor; ``fields`` as (type code, name, JVM type), in Java's order."""
    out = bytes((_TC_CLASSDESC,)) + _utf(name) + struct.pack(">qB", uid, flags)
    out += struct.pack(">H", len(fields))
    for code, field_name, jvm_type in fields:
        out += code.encode() + _utf(field_name) + _string(jvm_type)
    return out + bytes((_TC_ENDBLOCKDATA,)) + parent


_NULL = bytes((_TC_NULL,))
_BYTE_ARRAY_DESC = _class_desc("[B", _UID_BYTE_ARRAY, _SC_SERIALIZABLE, [], _NULL)
_SERIALIZED_THROWABLE_DESC = _class_desc(
    "org.apache.flink.util.SerializedThrowable",
    _UID_SERIALIZED_THROWABLE,
    _SC_SERIALIZABLE,
    [
        ("L", "fullStringifiedStackTrace", _STRING_TYPE),
        ("L", "originalErrorClassName", _STRING_TYPE),
        ("[", "serializedException", "[B"),
    ],
    _class_desc(
        "java.lang.Exception",
        _UID_EXCEPTION,
        _SC_SERIALIZABLE,
        [],
        _class_desc(
            "java.lang.Throwable",
            _UID_THROWABLE,
            _SC_SERIALIZABLE | _SC_WRITE_METHOD,
            [
                ("L", "cause", "Ljava/lang/Throwable;"),
                ("L", "detailMessage", _STRING_TYPE),
                ("[", "stackTrace", "[Ljava/lang/StackTraceElement;"),
                ("L", "suppressedExceptions", "Ljava/util/List;"),
            ],
            _NULL,
        ),
    ),
)
_PAYLOAD_HEADER = bytes((_TC_ARRAY,)) + _BYTE_ARRAY_DESC


def java_serialized_throwable(class_name: str, message: str, stack_trace: str, payload: bytes) -> bytes:
    """A Java serialisation stream of an ``org.apache.flink.util.SerializedThrowable``.

    No cause, stack or suppressed exceptions of its own (null, which Java accepts as empty);
    ``payload`` is its ``serializedException``, the last bytes of the stream.
    """
    throwable_data = _NULL + _string(message) + _NULL + _NULL + bytes((_TC_ENDBLOCKDATA,))
    own_data = _string(stack_trace) + _string(class_name)
    own_data += _PAYLOAD_HEADER + struct.pack(">i", len(payload)) + payload
    return _MAGIC + bytes((_TC_OBJECT,)) + _SERIALIZED_THROWABLE_DESC + throwable_data + own_data


def payload_of_java_serialized_throwable(data: bytes) -> bytes | None:
    """The ``serializedException`` bytes of a stream :func:`java_serialized_throwable` wrote, else None."""
    if not data.startswith(_MAGIC):
        return None
    at = data.rfind(_PAYLOAD_HEADER)
    while at >= 0:
        start = at + len(_PAYLOAD_HEADER) + 4
        if start <= len(data):
            (length,) = struct.unpack_from(">i", data, start - 4)
            if start + length == len(data):
                return data[start:]
        at = data.rfind(_PAYLOAD_HEADER, 0, at)
    return None


# -- the JSON ------------------------------------------------------------------------------------


def _stack_trace(w: WireError) -> str:
    lines = [f"flott.errors.{w.type}: {w.message}"]
    if w.traceback:
        lines.append(w.traceback.rstrip())
    if w.cause is not None:
        lines.append("Caused by: " + _stack_trace(w.cause))
    return "\n".join(lines)


def to_serialized_throwable(error: WireError | BaseException) -> SerializedThrowable:
    wire = error if isinstance(error, WireError) else error_to_wire(error)
    class_name = f"flott.errors.{wire.type}"
    trace = _stack_trace(wire)
    java = java_serialized_throwable(class_name, wire.message, trace, _encoder.encode(wire))
    return SerializedThrowable(
        class_name=class_name,
        stack_trace=trace,
        serialized_throwable=base64.b64encode(java).decode("ascii"),
    )


def from_serialized_throwable(data: Any) -> WireError:
    """The WireError in a ``failure-cause`` (JSON object or decoded struct); best effort for foreign ones."""
    if isinstance(data, SerializedThrowable):
        data = msgspec.to_builtins(data)
    if not isinstance(data, dict):
        return WireError(type="ClusterError", message=f"unreadable failure cause: {data!r}")
    encoded = data.get("serialized-throwable")
    if isinstance(encoded, str):
        try:
            raw = base64.b64decode(encoded, validate=True)
            return _decoder.decode(payload_of_java_serialized_throwable(raw) or raw)
        except (binascii.Error, ValueError, msgspec.DecodeError, msgspec.ValidationError):
            pass  # a real Flink cluster's Java-serialised exception: fall back to the text
    class_name = str(data.get("class", "java.lang.Throwable"))
    trace = str(data.get("stack-trace", ""))
    first_line = trace.splitlines()[0] if trace else class_name
    message = first_line.split(": ", 1)[1] if ": " in first_line else first_line
    return WireError(type="ClusterError", message=f"{class_name}: {message}", traceback=trace)
