"""The floors of the tree, checked from the code's own imports (inside functions too).

Step 10's rule: no loop between folders (Flink's modules), and no arrow from ``flott/runtime`` up to
``rest``, ``client`` or ``cli`` (the composition root ``flott/cluster`` wires them) nor to the user API
and its planner (``datastream``, ``table``, ``graph``), with a ground floor ``flott/api`` below the user
API and the runtime. A loop is broken by moving the shared contract down a
floor (or what joins the parts up one), never by listing it here.
"""

from __future__ import annotations

import ast

from tests.structure.import_graph import (
    FolderGraph,
    arrows_between,
    deferred_reason,
    folder_cycles,
    folder_graph,
)

UPPER_FLOORS = (
    "flott.graph",
    "flott.datastream",
    "flott.table",
    "flott.rest",
    "flott.client",
    "flott.cluster",
    "flott.cli",
)
"""Every floor above the runtime (ARCHITECTURE.md): the runtime imports none, inside functions neither."""


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


def test_function_level_imports_across_folders_say_why() -> None:
    """An import inside a function hides a cost from the reader: across folders it is kept only with a
    reason, ``# deferred: <why>`` on its line or in the comment just above it (or above the run of imports
    it belongs to), e.g. ``# deferred: aiohttp, ~0.5 s of CLI start-up``. Everything else is imported
    at module level, where the floors are visible."""
    graph = folder_graph()
    silent = sorted(
        {
            (site.source_file, site.line, dst)
            for targets in graph.edges.values()
            for dst, sites in targets.items()
            for site in sites
            if not site.module_level and site.deferred_reason is None
        }
    )
    assert not silent, (
        "function-level imports across folders without a '# deferred: <reason>' comment (move them to "
        "module level, or say what loading them at module level would cost):\n"
        + "\n".join(f"  {f}:{line} -> {dst}" for f, line, dst in silent)
    )


def test_the_reader_finds_the_reason_of_a_deferred_import() -> None:
    """The marker counts on the import's own lines, in the comment just above it, and above the run of
    imports it belongs to; a blank line or another statement ends the run."""
    source = """\
def f():
    import a  # deferred: on its line
    x = 1
    # deferred: above
    # (a second comment line)
    import b
    import c
    from d import (
        e,
    )

    import g
    x = 2
    from h import (  # deferred: inside
        i,
    )
"""
    tree = ast.parse(source)
    lines = source.splitlines()
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    run_start = {(n.end_lineno or n.lineno): n.lineno for n in imports}
    reasons = {n.lineno: deferred_reason(lines, n, run_start) for n in imports}
    assert reasons == {2: "on its line", 6: "above", 7: "above", 8: "above", 12: None, 14: "inside"}
