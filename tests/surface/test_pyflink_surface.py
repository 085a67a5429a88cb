"""flott's API surface against the real PyFlink 2.3's, from the recorded snapshot (no PyFlink needed).

The snapshot is written by ``scripts/pyflink-surface`` from the installed
apache-flink package. Every difference the comparison finds is either fixed in
flott or listed, with its reason, in ``exceptions.toml``; an entry there that no
longer matches a difference fails too, so the list only ever shrinks honestly.
The second half tests the comparison itself on small stand-in modules: each kind
of difference it claims to find, it finds.
"""

from __future__ import annotations

import enum
import json
import sys
import tomllib
import types
from collections import Counter
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest

from tests.surface.api_surface import Comparison, Difference, compare, describe

HERE = Path(__file__).parent
SNAPSHOT = HERE / "pyflink-2.3-surface.json"
EXCEPTIONS = HERE / "exceptions.toml"


def load_exceptions() -> dict[str, tuple[str, str]]:
    """``{difference key: (category, reason)}`` from exceptions.toml."""
    out: dict[str, tuple[str, str]] = {}
    for category, entries in tomllib.loads(EXCEPTIONS.read_text()).items():
        for key, reason in entries.items():
            assert key not in out, f"{key} is listed twice (in {out[key][0]!r} and {category!r})"
            assert isinstance(reason, str) and reason.strip(), f"{key} has no reason"
            out[key] = (category, reason)
    return out


@pytest.fixture(scope="module")
def differences() -> list[Difference]:
    return compare(json.loads(SNAPSHOT.read_text())["modules"])


def test_every_difference_from_pyflink_is_fixed_or_listed_with_a_reason(
    differences: list[Difference], record_property: Any
) -> None:
    exceptions = load_exceptions()
    per_category = Counter(exceptions[d.key][0] for d in differences if d.key in exceptions)
    record_property("surface_differences", len(differences))
    print(f"\n{len(differences)} differences from PyFlink 2.3's API surface:")
    for category, count in sorted(per_category.items()):
        print(f"  {count:3d}  {category}")
    unlisted = [str(d) for d in differences if d.key not in exceptions]
    assert not unlisted, (
        "differences from PyFlink not in exceptions.toml (fix them or list them):\n" + "\n".join(unlisted)
    )


def test_no_listed_exception_is_stale(differences: list[Difference]) -> None:
    current = {d.key for d in differences}
    stale = sorted(key for key in load_exceptions() if key not in current)
    assert not stale, "exceptions.toml lists differences that no longer exist (delete them):\n" + "\n".join(
        stale
    )


def test_the_snapshot_is_in_the_scripts_canonical_form() -> None:
    text = SNAPSHOT.read_text()
    snapshot = json.loads(text)
    assert text == json.dumps(snapshot, indent=1, sort_keys=True) + "\n", "re-run scripts/pyflink-surface"
    assert snapshot["pyflink_version"].startswith("2.3")
    modules = snapshot["modules"]
    pwf = modules["pyflink.datastream.functions"]["classes"]["ProcessWindowFunction"]
    assert pwf["type_params"] == ["IN", "OUT", "KEY", "W"]
    assert pwf["classes"]["Context"]["type_params"] == ["W2"]


def test_process_window_function_and_its_context_are_subscriptable_as_in_pyflink() -> None:
    from flott.datastream.functions import ProcessAllWindowFunction, ProcessWindowFunction
    from flott.datastream.window import TimeWindow, TumblingEventTimeWindows

    class F(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
        def process(self, key: str, context: Any, elements: Any) -> Any:
            return []

    assert ProcessWindowFunction.Context[TimeWindow] is not None
    assert ProcessAllWindowFunction.Context[TimeWindow] is not None
    assert TumblingEventTimeWindows[tuple] is not None
    assert issubclass(F, ProcessWindowFunction)


# --------------------------------------------------------------------------- the comparison itself

T = TypeVar("T")
W = TypeVar("W")


def _reference_module() -> types.ModuleType:
    class Base:
        pass

    class Function:  # not exported: its methods count as Fn's own
        def open(self, runtime_context: Any) -> None: ...

    class Fn(Base, Function, Generic[T, W]):
        class Context(Generic[W]):
            def window(self) -> Any: ...

        def process(self, key: Any, context: Any, elements: Any, timeout: int = 5) -> Any: ...

        @staticmethod
        def of(size: int) -> Any: ...

        def __init__(self, j_fn: Any = None, name: str = "x") -> None: ...

    class Wrapped:
        def __init__(self, j_wrapped: Any) -> None: ...

    class Mode(enum.Enum):
        ON = 0
        OFF = 1

    module = types.ModuleType("surfref.mod")
    module.Base, module.Fn, module.Wrapped, module.Mode = Base, Fn, Wrapped, Mode
    module.LIMIT = 10
    module.__all__ = ["Base", "Fn", "LIMIT", "Mode", "Wrapped"]
    for cls in (Base, Function, Fn, Fn.Context, Wrapped, Mode):
        cls.__module__ = "surfref.mod"
    return module


def _snapshot(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    for package in ("surfref", "surfimpl"):
        monkeypatch.setitem(sys.modules, package, types.ModuleType(package))
    monkeypatch.setitem(sys.modules, "surfref.mod", _reference_module())
    snapshot = describe(["surfref.mod"])
    assert json.loads(json.dumps(snapshot)) == describe(["surfref.mod"]), "describe is deterministic"
    return snapshot


def _differences(monkeypatch: pytest.MonkeyPatch, **impl: Any) -> set[str]:
    snapshot = _snapshot(monkeypatch)
    module = types.ModuleType("surfimpl.mod")
    for name, value in impl.items():
        setattr(module, name, value)
    monkeypatch.setitem(sys.modules, "surfimpl.mod", module)
    return {d.key for d in Comparison("surfref", "surfimpl").run(snapshot)}


class ImplBase:
    pass


class ImplMode(enum.Enum):
    ON = 0
    OFF = 1


class ImplFunction:
    def open(self, runtime_context: Any) -> None: ...


class GoodFn(ImplBase, ImplFunction, Generic[T, W]):
    class Context(Generic[W]):
        def window(self) -> Any: ...

    # an extra optional argument and a default where the reference has none are fine
    def process(self, key: Any, context: Any, elements: Any, timeout: int = 5, extra: int = 0) -> Any: ...

    @staticmethod
    def of(size: int = 1) -> Any: ...

    def __init__(self, name: str = "x") -> None: ...


class ImplWrapped:
    def __init__(self, whatever: Any, other: Any) -> None: ...  # reference requires j_wrapped: not compared


GOOD = {"Base": ImplBase, "Fn": GoodFn, "Wrapped": ImplWrapped, "Mode": ImplMode, "LIMIT": 10}


def test_a_faithful_implementation_has_no_differences(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _differences(monkeypatch, **GOOD) == set()


def test_missing_generic_parameters_and_non_subscriptable_nested_classes_are_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class PlainFn(GoodFn):  # type: ignore[type-arg]
        class Context:
            def window(self) -> Any: ...

    found = _differences(monkeypatch, **{**GOOD, "Fn": PlainFn})
    assert found == {"surfref.mod.Fn generic", "surfref.mod.Fn.Context generic"}


def test_argument_names_order_kinds_and_defaults_are_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    variants = {
        "renamed": "def process(self, key, ctx, elements, timeout=5): ...",
        "reordered": "def process(self, context, key, elements, timeout=5): ...",
        "keyword-only": "def process(self, key, context, elements, *, timeout=5): ...",
        "other default": "def process(self, key, context, elements, timeout=6): ...",
        "missing argument": "def process(self, key, context, elements): ...",
        "extra required argument": "def process(self, key, context, elements, x, timeout=5): ...",
        "required after the reference's": "def process(self, key, context, elements, timeout=5, *, x): ...",
    }
    for label, source in variants.items():
        namespace: dict[str, Any] = {}
        exec(source, namespace)
        cls = types.new_class(
            "Fn", (GoodFn[T, W],), exec_body=lambda ns, f=namespace["process"]: ns.update(process=f)
        )
        found = _differences(monkeypatch, **{**GOOD, "Fn": cls})
        assert found == {"surfref.mod.Fn.process signature"}, label


def test_missing_things_and_wrong_kinds_are_found(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoStatic(GoodFn[T, W]):
        def of(self, size: int) -> Any: ...  # type: ignore[override]

    class NotOfBase(ImplFunction, Generic[T, W]):
        Context = GoodFn.Context

        def __init__(self, name: str = "x") -> None: ...

        def process(self, key: Any, context: Any, elements: Any, timeout: int = 5) -> Any: ...

        @staticmethod
        def of(size: int) -> Any: ...

    class HalfMode(enum.Enum):
        ON = 0

    assert _differences(monkeypatch, **{**GOOD, "Fn": NoStatic}) == {"surfref.mod.Fn.of kind"}
    assert _differences(monkeypatch, **{**GOOD, "Fn": NotOfBase}) == {"surfref.mod.Fn base"}
    assert _differences(monkeypatch, **{**GOOD, "Mode": HalfMode}) == {
        "surfref.mod.Mode.OFF missing-enum-member"
    }

    class Renumbered(enum.Enum):
        ON = 1
        OFF = 0

    assert _differences(monkeypatch, **{**GOOD, "Mode": Renumbered}) == {"surfref.mod.Mode enum-values"}
    assert _differences(monkeypatch, **{**GOOD, "LIMIT": 11}) == {"surfref.mod.LIMIT value"}
    without = {k: v for k, v in GOOD.items() if k not in ("Wrapped", "LIMIT")}
    assert _differences(monkeypatch, **without) == {
        "surfref.mod.Wrapped missing-class",
        "surfref.mod.LIMIT missing-constant",
    }


def test_methods_inherited_from_bases_pyflink_does_not_export_are_compared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class WrongOpen(GoodFn[T, W]):
        def open(self, ctx: Any) -> None: ...

    assert _differences(monkeypatch, **{**GOOD, "Fn": WrongOpen}) == {"surfref.mod.Fn.open signature"}


def test_a_missing_module_is_one_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = _snapshot(monkeypatch)
    monkeypatch.delitem(sys.modules, "surfimpl.mod", raising=False)
    assert [d.key for d in Comparison("surfref", "surfimpl").run(snapshot)] == ["surfref.mod missing-module"]
