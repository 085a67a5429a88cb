"""The floors of the tree, checked from the code's own imports (inside functions too).

Step 10's rule: no loop between folders (Flink's modules), and no arrow from ``flott/runtime`` up to
``rest``, ``client`` or ``cli`` (the composition root ``flott/cluster`` wires them), with a ground floor
``flott/api`` below the user API and the runtime. A loop is broken by moving the shared contract down a
floor (or what joins the parts up one), never by listing it here.
"""

from __future__ import annotations

from tests.structure.import_graph import FolderGraph, arrows_between, folder_cycles, folder_graph

UPPER_FLOORS = ("flott.rest", "flott.client", "flott.cli")


def _describe(graph: FolderGraph, group: frozenset[str]) -> str:
    lines = []
    for src in sorted(group):
        for dst, sites in sorted(graph.edges.get(src, {}).items()):
            if dst in group:
                site = sites[0]
                lines.append(f"  {src} -> {dst}  ({site.source_file}:{site.line}, {len(sites)} imports)")
    return "\n".join(lines)


def test_no_import_loop_between_folders() -> None:
    graph = folder_graph()
    loops = folder_cycles(graph)
    assert not loops, "loops between folders; break each (move the shared contract down a floor):\n" + (
        "\n".join(f"{sorted(group)}:\n{_describe(graph, group)}" for group in loops)
    )


def test_runtime_does_not_import_upper_floors() -> None:
    graph = folder_graph()
    found = {}
    for upper in UPPER_FLOORS:
        found.update(arrows_between(graph, "flott.runtime", upper))
    assert not found, "the runtime imports an upper floor: " + "; ".join(
        f"{s} -> {d} at {sites[0].source_file}:{sites[0].line}" for (s, d), sites in found.items()
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
