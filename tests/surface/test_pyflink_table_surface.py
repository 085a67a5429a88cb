"""PyFlink 2.3's Table API surface, recorded for flott.table (issue 19) to be compared against.

``scripts/pyflink-surface`` writes pyflink.table's public modules to a snapshot of their own
(``pyflink-2.3-table-surface.json``), apart from the DataStream snapshot that
test_pyflink_surface.py compares: flott.table is being built, and its differences are to be
listed in exceptions.toml when the comparison is wired in with it. Until then this checks the
snapshot itself, and that the comparison reads it (every module reported as not yet present).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.surface.api_surface import compare

SNAPSHOT = Path(__file__).parent / "pyflink-2.3-table-surface.json"


def _modules() -> dict[str, dict[str, object]]:
    return dict(json.loads(SNAPSHOT.read_text())["modules"])


def test_the_table_snapshot_is_in_the_scripts_canonical_form() -> None:
    text = SNAPSHOT.read_text()
    snapshot = json.loads(text)
    assert text == json.dumps(snapshot, indent=1, sort_keys=True) + "\n", "re-run scripts/pyflink-surface"
    assert snapshot["pyflink_version"].startswith("2.3")


def test_the_table_snapshot_holds_what_table_programs_call() -> None:
    modules = _modules()
    classes = {
        (module, name): entry for module, m in modules.items() for name, entry in m["classes"].items()  # type: ignore[attr-defined]
    }
    env = classes[("pyflink.table.table_environment", "TableEnvironment")]["methods"]
    for method in ("create", "from_elements", "execute_sql", "sql_query", "create_temporary_view"):
        assert method in env, method
    table = classes[("pyflink.table.table", "Table")]["methods"]
    for method in ("select", "where", "group_by", "join_lateral", "window", "execute", "to_pandas"):
        assert method in table, method
    assert ("pyflink.table.udf", "ScalarFunction") in classes
    assert ("pyflink.table.window", "Tumble") in classes
    assert "col" in modules["pyflink.table.expressions"]["functions"]  # type: ignore[operator]


def test_until_flott_table_exists_the_comparison_reports_each_module_missing() -> None:
    if importlib.util.find_spec("flott.table") is not None:
        pytest.skip("flott.table exists: compare it in test_pyflink_surface.py and list its differences")
    differences = compare(_modules())
    assert {d.key for d in differences} == {f"{m} missing-module" for m in _modules()}
