"""Generated code that tells whether a value already is what a declared type's Java coder hands back.

Declared output types are checked on the data plane, once per record, so the check is generated
per type as straight-line code inside the loop that walks the records (no call per record): the
class of each value is compared with ``is`` against names bound as the function's locals, and a
tuple is unpacked into locals in a ``try`` (free in CPython 3.11 unless it raises) instead of being
measured with ``len`` and indexed per field. Measured with callgrind on the BATCH word count's
``Types.TUPLE([Types.STRING(), Types.INT()])`` (bench/type_check_micro.py): this form costs about
two thirds of one boolean expression with ``len`` and ``v[i]``.

:func:`fit_branch` writes the statements; the loops around them (a batch check, a lazy check, an
operator that folds the check into its own loop) are written by their users.
"""

from __future__ import annotations

from typing import Any

from flott.common.type_conversion import _CANONICAL_NAMESPACE, _canonical_expr

MAX_UNPACKED_FIELDS = 32
"""Tuples wider than this are checked by the converter instead (the generated code would be long)."""

LOCALS = ", ".join(f"{name}={name}" for name in _CANONICAL_NAMESPACE)
"""Keyword defaults binding the names the checks use as locals of a generated function
(``def check(batch, <LOCALS>):``): a local costs less to load than a global."""


def namespace(**names: Any) -> dict[str, Any]:
    """The globals of a generated function: the checks' names and the caller's ``names``."""
    return {**_CANONICAL_NAMESPACE, **names}


def fit_branch(type_info: Any, var: str, ok: list[str], indent: str) -> list[str] | None:
    """Statements at ``indent`` that run ``ok`` when the value in ``var`` fits ``type_info`` as it
    is, and otherwise fall through to whatever follows them; ``ok`` must end the iteration
    (``continue``, ``return``). None when only the converter can tell (a type without a
    generated check)."""
    return _branch(type_info, var, ok, indent, [0])


def _branch(type_info: Any, var: str, ok: list[str], indent: str, counter: list[int]) -> list[str] | None:
    from flott.common import typeinfo as ti

    if isinstance(type_info, ti.TupleTypeInfo):
        types = type_info.get_field_types()
        if not 0 < len(types) <= MAX_UNPACKED_FIELDS:
            return None
        names = []
        for _ in types:
            names.append(f"_f{counter[0]}")
            counter[0] += 1
        inner = indent + "        "
        body = _fields(list(zip(types, names, strict=True)), ok, inner, counter)
        if body is None:
            return None
        targets = ", ".join(names) + ("," if len(names) == 1 else "")
        return [
            f"{indent}if {var}.__class__ is TUPLE:",
            f"{indent}    try:",
            f"{indent}        {targets} = {var}",
            f"{indent}    except ValueError:",
            f"{indent}        pass",
            f"{indent}    else:",
            *body,
        ]
    expr = _canonical_expr(type_info, var)
    if expr is None:
        return None
    return [f"{indent}if {expr}:", *(f"{indent}    {line}" for line in ok)]


def _fields(
    fields: list[tuple[Any, str]], ok: list[str], indent: str, counter: list[int]
) -> list[str] | None:
    """The checks of a tuple's unpacked fields: the leaves in one condition, then the nested
    tuples, each inside the one before it."""
    from flott.common import typeinfo as ti

    leaves = [(t, n) for t, n in fields if not isinstance(t, ti.TupleTypeInfo)]
    nested = [(t, n) for t, n in fields if isinstance(t, ti.TupleTypeInfo)]
    conditions = [_canonical_expr(t, n) for t, n in leaves]
    if any(c is None for c in conditions):
        return None
    inner: list[str] = ok
    for t, n in reversed(nested):
        wrapped = _branch(t, n, inner, "", counter)
        if wrapped is None:
            return None
        inner = wrapped
    if not conditions:
        return [f"{indent}{line}" for line in inner]
    condition = " and ".join(c for c in conditions if c)
    return [f"{indent}if {condition}:", *(f"{indent}    {line}" for line in inner)]
