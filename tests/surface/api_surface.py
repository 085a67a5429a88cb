"""PyFlink's public API surface as data, and flott's differences from it.

Two halves that share one idea of what "the surface" is:

- :func:`describe` walks modules (run by ``scripts/pyflink-surface`` on the real
  PyFlink 2.3) and returns a JSON-able snapshot: every public class with its bases,
  ``Generic`` parameters, nested classes, methods (argument names, kinds, defaults,
  static/class/property flags), enum members, and module-level functions and
  constants.
- :func:`compare` reads such a snapshot and looks each entry up in flott's
  corresponding module (``pyflink.X`` -> ``flott.X``), returning one
  :class:`Difference` per thing a PyFlink program could trip over.

Only the standard library is imported here: the snapshot script runs under the
PyFlink virtualenv, which has none of flott's dependencies.

Rules applied by :func:`compare` rather than listed as exceptions, because they are
systematic properties of PyFlink's Java bridge, not individual gaps:

- parameters named ``j_*`` carry Java objects (``py4j`` handles); flott has no JVM,
  so they are dropped from PyFlink's signatures before comparing, and a constructor
  that requires one is not compared at all (PyFlink builds those objects from a Java
  object; users get them from factory methods such as ``FileSink.for_row_format``);
- ``__hash__ = None`` (an unhashable PyFlink class) does not oblige flott to be unhashable;
- PyFlink bases that are not public API (``JavaObjectWrapper``, ``JavaFunctionWrapper``
  and the like) are not required of flott's classes; ``abc.ABC`` and ``object`` are
  implementation choices, ``typing.Generic`` is checked through the type parameters.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Dunder methods a user's program calls (directly or through syntax). Others are noise.
USER_DUNDERS = frozenset(
    {
        "__init__",
        "__call__",
        "__getitem__",
        "__setitem__",
        "__iter__",
        "__next__",
        "__len__",
        "__contains__",
        "__enter__",
        "__exit__",
        "__eq__",
        "__hash__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__str__",
        "__repr__",
        "__getattr__",
    }
)
# Dunders whose argument names users never write: only their presence is compared.
PRESENCE_ONLY = USER_DUNDERS - {"__init__", "__call__"}

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_SIMPLE = (bool, int, float, str, bytes, type(None))


# --------------------------------------------------------------------------- describing


def _public(name: str) -> bool:
    return not name.startswith("_") or name in USER_DUNDERS


def _default_repr(value: Any) -> str:
    return _ADDRESS.sub("", repr(value))


def _type_name(obj: Any) -> str:
    """``module.qualname`` of a class, or a readable text for typing constructs."""
    if isinstance(obj, typing.TypeVar):
        return obj.__name__
    origin = typing.get_origin(obj)
    if origin is not None and origin is not obj:
        args = ", ".join(_type_name(a) for a in typing.get_args(obj))
        return f"{_type_name(origin)}[{args}]"
    if isinstance(obj, type) or obj is typing.Generic:
        return f"{obj.__module__}.{obj.__qualname__}"
    return _ADDRESS.sub("", repr(obj))


def _param_list(signature: inspect.Signature, bound: bool) -> list[dict[str, Any]]:
    params = list(signature.parameters.values())
    if (
        bound
        and params
        and params[0].kind
        in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        )
    ):
        params = params[1:]
    out = []
    for p in params:
        entry: dict[str, Any] = {"name": p.name, "kind": p.kind.name}
        if p.default is not inspect.Parameter.empty:
            entry["default"] = _default_repr(p.default)
        out.append(entry)
    return out


def _params(func: Any, bound: bool) -> list[dict[str, Any]] | None:
    """Parameters of ``func``; ``bound`` drops the first (``self``/``cls``)."""
    try:
        return _param_list(inspect.signature(func), bound)
    except (TypeError, ValueError):
        return None


def _constructor(cls: type) -> dict[str, Any]:
    """What a user passes to ``cls(...)`` (``__new__``/``__init__`` wherever they are defined)."""
    try:
        return {"kind": "method", "params": _param_list(inspect.signature(cls), bound=False)}
    except (TypeError, ValueError):
        return {"kind": "method", "params": None}


def _member(raw: Any) -> dict[str, Any] | None:
    """Describes one class-``__dict__`` entry; None if it is not a method or property."""
    if isinstance(raw, staticmethod):
        return {"kind": "staticmethod", "params": _params(raw.__func__, bound=False)}
    if isinstance(raw, classmethod):
        return {"kind": "classmethod", "params": _params(raw.__func__, bound=True)}
    if isinstance(raw, property):
        return {"kind": "property"}
    if inspect.isfunction(raw) or inspect.ismethoddescriptor(raw) or callable(raw):
        return {"kind": "method", "params": _params(raw, bound=True)}
    return None


def _type_params(cls: type) -> list[str]:
    params = getattr(cls, "__parameters__", ())
    if not isinstance(params, tuple) or not params:
        return []
    try:
        cls[tuple(object for _ in params) if len(params) > 1 else object]  # type: ignore[index]
    except TypeError:
        return []
    return [p.__name__ for p in params]


def describe_class(cls: type, canonical: dict[int, tuple[str, str]]) -> dict[str, Any]:
    """A class as data. ``canonical`` maps ``id(class)`` to where the snapshot describes it."""
    entry: dict[str, Any] = {
        "bases": [_type_name(b) for b in getattr(cls, "__orig_bases__", cls.__bases__)],
        "public_bases": sorted(list(canonical[id(b)]) for b in cls.__mro__[1:] if id(b) in canonical),
        "std_bases": sorted(
            _type_name(b) for b in cls.__mro__[1:] if b.__module__ in ("builtins", "enum") and b is not object
        ),
        "type_params": _type_params(cls),
        "methods": {},
        "attributes": {},
        "classes": {},
        "aliases": {},
    }
    is_enum = issubclass(cls, enum.Enum)
    if is_enum:
        entry["enum_members"] = {name: _default_repr(m.value) for name, m in cls.__members__.items()}
    else:
        entry["methods"]["__init__"] = _constructor(cls)
    # Members are described where they are visible to a user: on the class itself, plus
    # those it inherits from bases the snapshot does not describe (PyFlink's internal
    # ``Function``, ``KeyedStateStore``...), unless something nearer in the MRO shadows them.
    package = cls.__module__.split(".")[0]
    seen: set[str] = set()
    for klass in cls.__mro__:
        if klass is not cls and (id(klass) in canonical or klass.__module__.split(".")[0] != package):
            seen.update(klass.__dict__)
            continue
        for name, raw in klass.__dict__.items():
            if name in seen:
                continue
            seen.add(name)
            if not _public(name) or name == "__init__" or (is_enum and name in cls.__members__):
                continue
            if isinstance(raw, type):
                if klass is not cls:
                    continue
                if raw.__qualname__ == f"{cls.__qualname__}.{name}" and raw.__module__ == cls.__module__:
                    entry["classes"][name] = describe_class(raw, canonical)
                elif id(raw) in canonical:
                    module, qualname = canonical[id(raw)]
                    entry["aliases"][name] = {"module": module, "qualname": qualname}
                continue
            if raw is None and name in USER_DUNDERS:
                continue  # e.g. __hash__ = None: PyFlink's objects are unhashable, flott's may be
            member = _member(raw)
            if member is not None:
                entry["methods"][name] = member
            elif isinstance(raw, _SIMPLE):
                entry["attributes"][name] = _default_repr(raw)
    return {key: value for key, value in entry.items() if value or key == "methods"}


def _module_names(module: types.ModuleType) -> list[str]:
    """A module's public names: ``__all__``, else what it defines itself plus simple constants."""
    if hasattr(module, "__all__"):
        return sorted(set(module.__all__))
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType | typing.TypeVar):
            continue
        if isinstance(value, type) or inspect.isfunction(value):
            if getattr(value, "__module__", None) == module.__name__:
                names.append(name)
        elif isinstance(value, _SIMPLE):
            names.append(name)
    return sorted(names)


def describe(module_names: list[str]) -> dict[str, Any]:
    """The snapshot of ``module_names`` (all importable): ``{module: {classes, aliases, ...}}``."""
    modules = {name: importlib.import_module(name) for name in module_names}
    public = {name: _module_names(m) for name, m in modules.items()}
    # Packages also hand out what they install beyond __all__ (pyflink.datastream.connectors
    # sets FileSource, NumberSequenceSource... as attributes): those of walked modules count.
    for name, module in modules.items():
        if hasattr(module, "__path__") and hasattr(module, "__all__"):
            for attr, obj in vars(module).items():
                home = getattr(obj, "__module__", None)
                if (
                    not attr.startswith("_")
                    and (isinstance(obj, type) or inspect.isfunction(obj))
                    and home in modules
                    and home != name
                    and obj.__qualname__ in public[home]
                    and attr not in public[name]
                ):
                    public[name].append(attr)
            public[name].sort()
    # Where each public class or function is described: the module that defines it,
    # when that module is walked and lists it; else the first walked module exporting it.
    canonical: dict[int, tuple[str, str]] = {}
    for name in sorted(modules):
        for attr in public[name]:
            obj = getattr(modules[name], attr)
            if not (isinstance(obj, type) or inspect.isfunction(obj)):
                continue
            home = obj.__module__
            if home in modules and obj.__qualname__ in public[home]:
                canonical[id(obj)] = (home, obj.__qualname__)
            else:
                canonical.setdefault(id(obj), (name, attr))
    # Nested classes are described inside their owner; record their place too.
    for obj_id, (module, qualname) in list(canonical.items()):
        owner = getattr(modules[module], qualname.split(".")[0])
        if id(owner) == obj_id and isinstance(owner, type):
            _index_nested(owner, module, qualname, canonical)

    snapshot: dict[str, Any] = {}
    for name in sorted(modules):
        entry: dict[str, Any] = {"classes": {}, "aliases": {}, "functions": {}, "constants": {}}
        for attr in public[name]:
            obj = getattr(modules[name], attr)
            if isinstance(obj, type) or inspect.isfunction(obj):
                home = canonical[id(obj)]
                if home != (name, attr):
                    entry["aliases"][attr] = {"module": home[0], "qualname": home[1]}
                elif isinstance(obj, type):
                    entry["classes"][attr] = describe_class(obj, canonical)
                else:
                    entry["functions"][attr] = {"kind": "function", "params": _params(obj, bound=False)}
            elif isinstance(obj, _SIMPLE):
                entry["constants"][attr] = _default_repr(obj)
            else:
                entry["constants"][attr] = f"<{type(obj).__name__}>"
        snapshot[name] = entry
    return snapshot


def _index_nested(cls: type, module: str, qualname: str, canonical: dict[int, tuple[str, str]]) -> None:
    for name, raw in cls.__dict__.items():
        if isinstance(raw, type) and _public(name) and raw.__qualname__ == f"{cls.__qualname__}.{name}":
            canonical.setdefault(id(raw), (module, f"{qualname}.{name}"))
            _index_nested(raw, module, f"{qualname}.{name}", canonical)


# --------------------------------------------------------------------------- comparing


@dataclass(frozen=True, order=True)
class Difference:
    """One way flott's surface differs from PyFlink's. ``key`` is what the exceptions file lists."""

    name: str  # PyFlink's dotted path, e.g. pyflink.datastream.functions.ProcessWindowFunction.process
    code: str  # missing-module, missing-class, missing-method, signature, ...
    detail: str = ""

    @property
    def key(self) -> str:
        return f"{self.name} {self.code}"

    def __str__(self) -> str:
        return f"{self.key}: {self.detail}" if self.detail else self.key


def _drop_java(params: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in params if not p["name"].startswith("j_")]


def _format(params: list[dict[str, Any]] | None) -> str:
    if params is None:
        return "(?)"
    parts = []
    keyword_only_marked = False
    for i, p in enumerate(params):
        kind = p["kind"]
        text = p["name"]
        if kind == "VAR_POSITIONAL":
            text, keyword_only_marked = "*" + text, True
        elif kind == "VAR_KEYWORD":
            text = "**" + text
        elif kind == "KEYWORD_ONLY" and not keyword_only_marked:
            parts.append("*")
            keyword_only_marked = True
        if "default" in p:
            text += "=" + p["default"]
        parts.append(text)
        if kind == "POSITIONAL_ONLY" and (i + 1 == len(params) or params[i + 1]["kind"] != "POSITIONAL_ONLY"):
            parts.append("/")
    return "(" + ", ".join(parts) + ")"


def _same_param(ours: dict[str, Any], theirs: dict[str, Any], rename: Callable[[str], str]) -> bool:
    """Whether every PyFlink call passing this parameter works on flott the same way.

    flott may be more lenient: a default where PyFlink has none (a PyFlink program
    always passes it), or positional-or-keyword where PyFlink is positional-only.
    """
    if ours["name"] != theirs["name"]:
        return False
    if ours["kind"] != theirs["kind"] and not (
        ours["kind"] == "POSITIONAL_OR_KEYWORD" and theirs["kind"] == "POSITIONAL_ONLY"
    ):
        return False
    if "default" not in theirs:
        return True
    return ours.get("default") == rename(theirs["default"])


def _signature_fits(
    ours: list[dict[str, Any]], theirs: list[dict[str, Any]], rename: Callable[[str], str]
) -> bool:
    """flott's parameters start with PyFlink's, in order; extra ones must be optional."""
    if len(ours) < len(theirs):
        return False
    if not all(_same_param(o, t, rename) for o, t in zip(ours, theirs, strict=False)):
        return False
    return all("default" in p or p["kind"].startswith("VAR_") for p in ours[len(theirs) :])


def _lookup(cls: type, name: str) -> tuple[type, Any] | None:
    """Where ``name`` is defined in ``cls``'s MRO (never ``object``: its dunders are not an API)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            if klass is object:
                return None
            return klass, klass.__dict__[name]
    return None


@dataclass(frozen=True)
class Comparison:
    """Compares the implementation's modules (``flott.X``) with a reference snapshot (``pyflink.X``)."""

    reference: str = "pyflink"
    implementation: str = "flott"

    def ours(self, name: str) -> str:
        """The implementation's name for a reference name (also inside default reprs)."""
        return name.replace(self.reference + ".", self.implementation + ".")

    def resolve(self, module: str, qualname: str) -> Any:
        """The implementation's counterpart of ``module.qualname``, or None."""
        try:
            obj: Any = importlib.import_module(self.ours(module + ".")[:-1])
        except ImportError:
            return None
        for part in qualname.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj

    def run(self, snapshot: dict[str, Any]) -> list[Difference]:
        """Every difference from the ``snapshot``'s modules, sorted."""
        out: list[Difference] = []
        for module_name, theirs in sorted(snapshot.items()):
            try:
                module = importlib.import_module(self.ours(module_name + ".")[:-1])
            except ModuleNotFoundError:
                out.append(Difference(module_name, "missing-module"))
                continue
            for name, entry in sorted(theirs.get("classes", {}).items()):
                out += self.compare_class(f"{module_name}.{name}", entry, getattr(module, name, None))
            for name, target in sorted(theirs.get("aliases", {}).items()):
                out += self.compare_alias(f"{module_name}.{name}", getattr(module, name, None), target)
            for name, entry in sorted(theirs.get("functions", {}).items()):
                func = getattr(module, name, None)
                if not callable(func):
                    out.append(Difference(f"{module_name}.{name}", "missing-function"))
                else:
                    out += self.compare_params(f"{module_name}.{name}", entry["params"], _params(func, False))
            for name, value in sorted(theirs.get("constants", {}).items()):
                out += self.compare_constant(f"{module_name}.{name}", value, module, name)
        return sorted(out)

    def compare_params(
        self, path: str, theirs: list[dict[str, Any]] | None, ours: list[dict[str, Any]] | None
    ) -> list[Difference]:
        if theirs is None or ours is None:
            return []
        theirs = _drop_java(theirs)
        if _signature_fits(ours, theirs, self.ours):
            return []
        return [Difference(path, "signature", f"PyFlink {_format(theirs)}, flott {_format(ours)}")]

    def compare_member(self, path: str, name: str, theirs: dict[str, Any], cls: type) -> list[Difference]:
        if name == "__init__":
            if any(p["name"].startswith("j_") and "default" not in p for p in theirs["params"] or []):
                return []  # PyFlink builds these from a Java object; users get them from factories
            ours: dict[str, Any] = _constructor(cls)
        else:
            found = _lookup(cls, name)
            if found is None or found[1] is None:
                return [Difference(path, "missing-method")]
            member = _member(found[1])
            if member is None:
                return [Difference(path, "kind", f"PyFlink has a {theirs['kind']}, flott an attribute")]
            ours = member
        if ours["kind"] != theirs["kind"]:
            return [Difference(path, "kind", f"PyFlink has a {theirs['kind']}, flott a {ours['kind']}")]
        if name in PRESENCE_ONLY:
            return []
        return self.compare_params(path, theirs.get("params"), ours.get("params"))

    def compare_class(self, path: str, theirs: dict[str, Any], cls: Any) -> list[Difference]:
        if not isinstance(cls, type):
            return [Difference(path, "missing-class")]
        out: list[Difference] = []
        for module, qualname in theirs.get("public_bases", []):
            ours = self.resolve(module, qualname)
            if isinstance(ours, type) and not issubclass(cls, ours):
                out.append(Difference(path, "base", f"not a subclass of {self.ours(module)}.{qualname}"))
        for base in theirs.get("std_bases", []):
            module, _, qualname = base.rpartition(".")
            std = getattr(importlib.import_module(module), qualname, None)
            if isinstance(std, type) and not issubclass(cls, std):
                out.append(Difference(path, "base", f"not a subclass of {base}"))
        wanted = theirs.get("type_params", [])
        if wanted:
            have = _type_params(cls)
            if len(have) != len(wanted):
                text = f"Generic[{', '.join(have)}]" if have else "not subscriptable"
                out.append(Difference(path, "generic", f"PyFlink Generic[{', '.join(wanted)}], flott {text}"))
        members = getattr(cls, "__members__", {})
        other_values = []
        for member, value in sorted(theirs.get("enum_members", {}).items()):
            if member not in members:
                out.append(Difference(f"{path}.{member}", "missing-enum-member"))
            elif _default_repr(members[member].value) != value:
                other_values.append(
                    f"{member}: PyFlink {value}, flott {_default_repr(members[member].value)}"
                )
        if other_values:  # one difference per enum: the values are one design choice
            out.append(Difference(path, "enum-values", "; ".join(other_values)))
        for name, entry in sorted(theirs.get("methods", {}).items()):
            out += self.compare_member(f"{path}.{name}", name, entry, cls)
        for name, value in sorted(theirs.get("attributes", {}).items()):
            out += self.compare_constant(f"{path}.{name}", value, cls, name)
        for name, nested in sorted(theirs.get("classes", {}).items()):
            out += self.compare_class(f"{path}.{name}", nested, getattr(cls, name, None))
        for name, target in sorted(theirs.get("aliases", {}).items()):
            out += self.compare_alias(f"{path}.{name}", getattr(cls, name, None), target)
        return out

    def compare_alias(self, path: str, ours: Any, target: dict[str, str]) -> list[Difference]:
        where = f"{target['module']}.{target['qualname']}"
        if ours is None:
            return [Difference(path, "missing-name", f"PyFlink re-exports {where}")]
        expected = self.resolve(target["module"], target["qualname"])
        if expected is not None and ours is not expected:
            return [Difference(path, "not-same-object", f"is not {self.ours(where)}")]
        return []

    def compare_constant(self, path: str, value: str, owner: Any, name: str) -> list[Difference]:
        if not hasattr(owner, name):
            return [Difference(path, "missing-constant")]
        ours = _default_repr(getattr(owner, name))
        if not value.startswith("<") and ours != value:
            return [Difference(path, "value", f"PyFlink {value}, flott {ours}")]
        return []


def compare(snapshot: dict[str, Any]) -> list[Difference]:
    """Every difference between flott and the PyFlink ``snapshot`` (its ``modules``), sorted."""
    return Comparison().run(snapshot)
