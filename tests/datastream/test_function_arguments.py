"""What map/flat_map/filter/reduce take as their function, as PyFlink decides it at the call."""

from __future__ import annotations

from typing import Any

import pytest

from flott.datastream import MapFunction, StreamExecutionEnvironment


class Upper(MapFunction):
    def map(self, value: Any) -> Any:
        return value.upper()


def test_a_builtin_type_is_a_function_as_in_pyflink() -> None:
    ds = StreamExecutionEnvironment.get_execution_environment().from_collection([1, 2])
    ds.map(str)
    ds.flat_map(list)
    ds.filter(bool)


def test_a_function_class_instead_of_an_instance_is_refused() -> None:
    ds = StreamExecutionEnvironment.get_execution_environment().from_collection(["a"])
    ds.map(Upper())
    with pytest.raises(TypeError, match="MapFunction or a callable"):
        ds.map(Upper)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="MapFunction or a callable"):
        ds.map(42)  # type: ignore[arg-type]
