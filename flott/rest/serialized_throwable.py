"""Exceptions on the REST wire: Flink's ``SerializedThrowable`` JSON, carrying flott's WireError.

Flink writes ``{"class", "stack-trace", "serialized-throwable"}`` where the
last is base64 of a Java-serialised exception. flott writes the same three
fields; ``serialized-throwable`` holds base64 of the msgpack-encoded
:class:`~flott.runtime.rpc.service.WireError`, so flott's RestClusterClient
rebuilds the exact error (a user function's exception type, message and the
worker's traceback), and everyone else reads ``class`` and ``stack-trace``.
Used by the server (job results, async operations) and the client.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import msgspec

from flott.rest.messages.common import SerializedThrowable
from flott.runtime.rpc.service import WireError, error_to_wire

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(WireError)


def _stack_trace(w: WireError) -> str:
    lines = [f"flott.errors.{w.type}: {w.message}"]
    if w.traceback:
        lines.append(w.traceback.rstrip())
    if w.cause is not None:
        lines.append("Caused by: " + _stack_trace(w.cause))
    return "\n".join(lines)


def to_serialized_throwable(error: WireError | BaseException) -> SerializedThrowable:
    wire = error if isinstance(error, WireError) else error_to_wire(error)
    return SerializedThrowable(
        class_name=f"flott.errors.{wire.type}",
        stack_trace=_stack_trace(wire),
        serialized_throwable=base64.b64encode(_encoder.encode(wire)).decode("ascii"),
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
            return _decoder.decode(base64.b64decode(encoded, validate=True))
        except (binascii.Error, ValueError, msgspec.DecodeError, msgspec.ValidationError):
            pass  # a Java-serialised throwable (a real Flink cluster): fall back to the text
    class_name = str(data.get("class", "java.lang.Throwable"))
    trace = str(data.get("stack-trace", ""))
    first_line = trace.splitlines()[0] if trace else class_name
    message = first_line.split(": ", 1)[1] if ": " in first_line else first_line
    return WireError(type="ClusterError", message=f"{class_name}: {message}", traceback=trace)
