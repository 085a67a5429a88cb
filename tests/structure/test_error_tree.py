"""One error tree: every flott error is defined in ``flott/errors.py``, listed in its docstring, and
comes back from the wire as its own class with its own HTTP status."""

from __future__ import annotations

import ast
import inspect

import pytest

from flott import errors
from tests.structure.import_graph import PACKAGE, ROOT, parse_module

OUTSIDE_THE_TREE = {
    # click's own usage error: the CLI's argument mistakes, printed by click as Flink's CLI does
    "ConfigurationUsageError": "flott/cli/options.py",
    # a signal inside type conversion, turned into the user's TypeError where a record is written
    "OutputTypeMismatch": "flott/common/type_conversion.py",
}


def _exception_classes_outside_errors_py() -> dict[str, str]:
    out = {}
    for file in sorted(PACKAGE.rglob("*.py")):
        rel = str(file.relative_to(ROOT))
        if rel == "flott/errors.py":
            continue
        for node in ast.walk(parse_module(file)):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = [ast.unparse(b) for b in node.bases]
                if any(b.endswith(("Error", "Exception")) for b in bases):
                    out[node.name] = rel
    return out


def test_every_public_error_class_is_defined_in_the_errors_module() -> None:
    assert _exception_classes_outside_errors_py() == OUTSIDE_THE_TREE


def test_the_docstring_draws_every_class_of_the_tree() -> None:
    doc = errors.__doc__ or ""
    ours = [name for name, cls in errors._REGISTRY.items() if cls.__module__ == "flott.errors"]
    missing = [name for name in ours if f"── {name} " not in doc and name != "FlottError"]
    assert not missing, f"flott/errors.py's tree does not list {missing}"


@pytest.mark.parametrize(
    "name", sorted(n for n, c in errors._REGISTRY.items() if c.__module__ == "flott.errors")
)
def test_every_error_crosses_the_wire_as_itself(name: str) -> None:
    cls = errors._REGISTRY[name]
    if cls is errors.UserCodeError:
        err: errors.FlottError = errors.UserCodeError("ValueError", "bad", "tb", "Map")
    elif "cause" in inspect.signature(cls.__init__).parameters:
        err = cls("it failed", errors.JobNotFoundError("gone"))  # type: ignore[call-arg]
    else:
        err = cls("it failed")
    back = errors.error_from_wire(errors.error_to_wire(err))
    assert type(back) is cls
    assert back.http_status == cls.http_status
    assert str(back) == str(err)
