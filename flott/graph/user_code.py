"""Pickling of user objects into the JobGraph.

cloudpickle (3.x) replaces the file name of every code object it pickles by
value with ``<dynamic-code>``, to make payloads deterministic. Users reading a
traceback from a TaskExecutor need their file name, so flott keeps it: the
code reducer is wrapped to put the real ``co_filename`` back.
"""

from __future__ import annotations

import io
import types
from typing import Any

import cloudpickle
from cloudpickle import cloudpickle as _cp

_DYNAMIC = "<dynamic-code>"


def _code_reduce_keeping_filename(code: types.CodeType) -> Any:
    ctor, args = _cp._code_reduce(code)
    return ctor, tuple(code.co_filename if a == _DYNAMIC else a for a in args)


class _UserCodePickler(cloudpickle.Pickler):
    dispatch_table = dict(cloudpickle.Pickler.dispatch_table)
    dispatch_table[types.CodeType] = _code_reduce_keeping_filename


def dumps_user_object(obj: Any) -> bytes:
    """cloudpickle ``obj`` (protocol 5), keeping source file names for tracebacks."""
    buf = io.BytesIO()
    _UserCodePickler(buf, protocol=5).dump(obj)
    return buf.getvalue()
