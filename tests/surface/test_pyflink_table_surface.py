"""PyFlink 2.3's Table API surface, recorded for flott.table (issue 19) to be compared against.

``scripts/pyflink-surface`` writes pyflink.table's public modules to a snapshot of their own
(``pyflink-2.3-table-surface.json``), apart from the DataStream snapshot that
test_pyflink_surface.py compares. flott.table is still being built, so its differences stand in
``table-exceptions.toml`` by category (most are work to do, not reviewed decisions): a new
difference fails, and so does an entry that no longer matches one, so the list only shrinks.
"""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.surface.api_surface import Difference, compare

SNAPSHOT = Path(__file__).parent / "pyflink-2.3-table-surface.json"
EXCEPTIONS = Path(__file__).parent / "table-exceptions.toml"


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


def _exceptions() -> dict[str, str]:
    """``{difference key: category}`` from table-exceptions.toml."""
    out: dict[str, str] = {}
    for category, entries in tomllib.loads(EXCEPTIONS.read_text()).items():
        for key, reason in entries.items():
            assert key not in out, f"{key} is listed twice"
            assert isinstance(reason, str) and reason.strip(), f"{key} has no reason"
            out[key] = category
    return out


@pytest.fixture(scope="module")
def differences() -> list[Difference]:
    return compare(_modules())


def test_every_difference_from_pyflink_table_is_listed(
    differences: list[Difference], record_property: Any
) -> None:
    listed = _exceptions()
    record_property("table_surface_differences", len(differences))
    print(f"\n{len(differences)} differences from PyFlink 2.3's pyflink.table surface:")
    for category, count in sorted(Counter(listed[d.key] for d in differences if d.key in listed).items()):
        print(f"  {count:3d}  {category}")
    unlisted = [str(d) for d in differences if d.key not in listed]
    assert not unlisted, (
        "new differences from pyflink.table (fix them or list them in table-exceptions.toml):\n"
        + "\n".join(unlisted)
    )


def test_no_listed_table_difference_is_stale(differences: list[Difference]) -> None:
    current = {d.key for d in differences}
    stale = sorted(key for key in _exceptions() if key not in current)
    assert not stale, "table-exceptions.toml lists differences that no longer exist (delete them):\n" + (
        "\n".join(stale)
    )
