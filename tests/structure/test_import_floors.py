"""The floors of the tree, checked from the code's own imports (inside functions too).

Step 10's rule is no loop between folders and no arrow from ``flott/runtime`` up to ``rest``, ``client``
or ``cli`` (the composition root ``flott/cluster`` wires them), and a ground floor ``flott/api`` below
the user API and the runtime. The tree is not there yet; this test holds what is left to a list that
may only shrink, so that no change adds a loop while the redesign removes them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.structure.import_graph import arrows_between, folder_cycles, folder_graph

KNOWN = tomllib.loads((Path(__file__).parent / "known_import_cycles.toml").read_text(encoding="utf-8"))
UPPER_FLOORS = ("flott.rest", "flott.client", "flott.cli")


def _describe(graph, group: frozenset[str]) -> str:  # type: ignore[no-untyped-def]
    lines = []
    for src in sorted(group):
        for dst, sites in sorted(graph.edges.get(src, {}).items()):
            if dst in group:
                site = sites[0]
                lines.append(f"  {src} -> {dst}  ({site.source_file}:{site.line}, {len(sites)} imports)")
    return "\n".join(lines)


def test_no_new_import_loop_between_folders() -> None:
    graph = folder_graph()
    known = [frozenset(entry["folders"]) for entry in KNOWN.get("cycle", [])]
    for group in folder_cycles(graph):
        assert any(group <= k for k in known), (
            f"a new import loop between folders {sorted(group)}; break it (move the shared contract "
            f"down a floor) instead of listing it. Arrows in the loop:\n{_describe(graph, group)}"
        )


def test_listed_loops_still_exist() -> None:
    current = folder_cycles(folder_graph())
    for entry in KNOWN.get("cycle", []):
        listed = frozenset(entry["folders"])
        assert listed in current, (
            "a listed import loop shrank or is gone: update tests/structure/known_import_cycles.toml to "
            f"the loops that remain: {[sorted(c) for c in current]}"
        )


def test_runtime_does_not_import_new_upper_floors() -> None:
    graph = folder_graph()
    known = {(e["from"], e["to"]) for e in KNOWN.get("upward", [])}
    found = {}
    for upper in UPPER_FLOORS:
        found.update(arrows_between(graph, "flott.runtime", upper))
    new = {arrow: sites for arrow, sites in found.items() if arrow not in known}
    assert not new, "the runtime imports an upper floor: " + "; ".join(
        f"{s} -> {d} at {sites[0].source_file}:{sites[0].line}" for (s, d), sites in new.items()
    )
    stale = known - set(found)
    assert not stale, (
        f"listed upward arrows are gone; delete them from known_import_cycles.toml: {sorted(stale)}"
    )


def test_the_reader_sees_function_level_and_relative_imports() -> None:
    """The graph must count what runs: a function-level import makes an arrow, TYPE_CHECKING ones do not."""
    graph = folder_graph()
    cli = graph.edges["flott.cli"]
    assert "flott.cluster" in cli  # the CLI starts a cluster only when a command asks for one
    assert all(not s.module_level for s in cli["flott.cluster"])


GROUND_FLOOR_MAY_IMPORT = ("flott.api", "flott.common", "flott.configuration", "flott.errors")


def test_the_ground_floor_imports_nothing_above_it() -> None:
    """``flott.api`` holds the contracts the user API and the runtime share: it must stay below both."""
    graph = folder_graph()
    above = {
        (src, dst): sites
        for src, targets in graph.edges.items()
        if src == "flott.api" or src.startswith("flott.api.")
        for dst, sites in targets.items()
        if not any(dst == ok or dst.startswith(ok + ".") for ok in GROUND_FLOOR_MAY_IMPORT)
    }
    assert not above, "flott.api imports a floor above it: " + "; ".join(
        f"{s} -> {d} at {sites[0].source_file}:{sites[0].line}" for (s, d), sites in above.items()
    )
