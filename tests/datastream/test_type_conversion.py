"""Declared types at sources and in print, as PyFlink 2.3 behaves (goldens recorded from it).

Unit tests pin the conversions (tuple → Row with field access, float32, integer widths,
HashMap order, millisecond times) and the plan-time refusal; the end-to-end tests run the
``types_*`` conformance programs on real TaskExecutors and compare their stdout, as a
multiset of lines, with what the real PyFlink printed for the same program.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flott.common import Row, Types
from flott.common.type_conversion import convert_collection
from flott.common.typeinfo import make_print_formatter
from flott.datastream import StreamExecutionEnvironment
from flott.errors import InvalidProgramError

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "conformance"
ROW_TYPE = Types.ROW_NAMED(["id", "info"], [Types.INT(), Types.STRING()])


def test_row_named_elements_become_rows_with_field_access() -> None:
    rows = convert_collection([(1, "a"), [2, "b"], {"info": "c", "id": 3}, Row(info="d", id=4)], ROW_TYPE)
    assert [(r.id, r.info) for r in rows] == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    assert all(isinstance(r, Row) and r.as_dict() == {"id": r.id, "info": r.info} for r in rows)
    unnamed = convert_collection([(1, "a")], Types.ROW([Types.INT(), Types.STRING()]))[0]
    assert repr(unnamed) == "Row(f0=1, f1='a')"


def test_row_fields_that_do_not_fit_become_none_as_in_pyflink() -> None:
    assert repr(convert_collection([("x", 2)], ROW_TYPE)[0]) == "Row(id=None, info='2')"


def test_values_take_the_declared_width_and_precision() -> None:
    assert convert_collection([1.1], Types.FLOAT()) == [1.100000023841858]
    assert convert_collection([200, 2**40], Types.BYTE()) == [-56, 0]
    assert convert_collection([1, True, 1.5], Types.STRING()) == ["1", "true", "1.5"]
    assert convert_collection([decimal.Decimal("-0")], Types.BIG_DEC()) == [decimal.Decimal("0")]
    ts = datetime.datetime(2020, 1, 2, 3, 4, 5, 123456)
    assert convert_collection([ts], Types.SQL_TIMESTAMP()) == [ts.replace(microsecond=123000)]
    m = convert_collection([{1: "a", 17: "b", 33: "c", 2: "d"}], Types.MAP(Types.INT(), Types.STRING()))[0]
    assert list(m) == [33, 17, 1, 2], "java.util.HashMap order, as PyFlink's functions see it"


@pytest.mark.parametrize(
    ("elements", "type_info", "reason"),
    [
        (["a"], Types.INT(), "needs an int, got str"),
        ([1], Types.DOUBLE(), "needs a float, got int"),
        ([None], Types.STRING(), "needs a value, got None"),
        ([(1,)], ROW_TYPE, "2 fields are required while 1 values are provided"),
        ([("a", "b")], Types.TUPLE([Types.STRING(), Types.INT()]), "needs an int, got str"),
    ],
)
def test_elements_that_do_not_fit_are_refused_at_from_collection(
    elements: list[object], type_info: object, reason: str
) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    with pytest.raises(InvalidProgramError, match=reason) as caught:
        env.from_collection(elements, type_info=type_info)
    assert str(caught.value).startswith("from_collection(): element 0 (")


def test_print_renders_rows_like_pyflink_and_bare_arrays_as_java_identities() -> None:
    assert make_print_formatter(ROW_TYPE)(Row(id=1, info=None)) == "+I[1,None]"
    assert make_print_formatter(Types.TUPLE([Types.STRING(), ROW_TYPE]))(("a", Row(id=1, info="b"))) == (
        "(a,+I[1, b])"
    )
    assert make_print_formatter(Types.PRIMITIVE_ARRAY(Types.INT()))([1, 2]).startswith("[I@")
    assert make_print_formatter(Types.BASIC_ARRAY(Types.STRING()))(["a"]).startswith("[Ljava.lang.String;@")
    tuple_of_arrays = Types.TUPLE([Types.PRIMITIVE_ARRAY(Types.INT()), Types.BASIC_ARRAY(Types.STRING())])
    assert make_print_formatter(tuple_of_arrays)(([1, 2], ["a"])) == "([1, 2],[a])"


def _run_on_flott(name: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    source = (CORPUS / "programs" / f"{name}.py").read_text().replace("pyflink", "flott")
    program = tmp_path / f"{name}.py"
    program.write_text(source)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, str(program)], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env
    )


@pytest.mark.parametrize(
    "name",
    [
        "types_row_named",
        "types_tuple_print",
        "types_float_double",
        "types_list_map",
        "types_rejected_elements",
    ],
)
def test_corpus_program_prints_what_pyflink_printed(name: str, tmp_path: Path) -> None:
    proc = _run_on_flott(name, tmp_path)
    assert proc.returncode == 0, proc.stderr
    golden = (CORPUS / "golden" / f"{name}.stdout").read_text().splitlines()
    assert collections.Counter(proc.stdout.splitlines()) == collections.Counter(golden)


def test_a_mismatching_collection_fails_the_program_before_it_runs(tmp_path: Path) -> None:
    proc = _run_on_flott("types_mismatch", tmp_path)
    assert proc.returncode != 0
    expected = (CORPUS / "golden" / "types_mismatch.stderr-contains").read_text().strip()
    assert expected in proc.stderr
    assert "does not fit type_info Integer" in proc.stderr
    assert "JobExecution" not in proc.stderr, "refused at from_collection, not when the job ran"
