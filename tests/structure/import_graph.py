"""The import graph of the ``flott`` package, read from the code's own ``import`` statements.

Why here and not with grimp: the rule we check is about folders (Flink's modules), counting imports inside
functions too, and the stdlib ``ast`` gives exactly that in a few lines with nothing to install.
"""

from __future__ import annotations

import ast
import functools
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "flott"


DEFERRED_MARKER = "# deferred:"
"""How a function-level import says why it is not at module level (``# deferred: <reason>``)."""


@dataclass(frozen=True)
class ImportSite:
    """One import statement: which file, which line, whether at module level, and for a
    function-level import the reason its ``# deferred:`` comment gives (None: it gives none)."""

    source_file: str
    line: int
    module_level: bool
    deferred_reason: str | None = None


@dataclass
class FolderGraph:
    """Folder → folders it imports, with the statements that make each arrow."""

    edges: dict[str, dict[str, list[ImportSite]]] = field(default_factory=dict)

    def add(self, src: str, dst: str, site: ImportSite) -> None:
        if src != dst:
            self.edges.setdefault(src, {}).setdefault(dst, []).append(site)

    def nodes(self) -> set[str]:
        out = set(self.edges)
        for targets in self.edges.values():
            out.update(targets)
        return out


def _node(folder: str, module: str) -> str:
    """The graph node of a module: its folder, except at the top, where each module is its own node.

    The top folder holds the distribution's entry (``flott/__init__.py``) beside the ground-floor
    modules every part imports (``errors``, ``configuration``); one node for all of them would put
    the whole tree in one loop and hide the loops that matter.
    """
    return module if folder == "flott" else folder


@functools.cache
def _folder_of_module(dotted: str) -> str | None:
    """The node (a dotted folder, or a top-level module) holding module ``dotted``; None if not flott's."""
    if dotted != "flott" and not dotted.startswith("flott."):
        return None
    path = ROOT / dotted.replace(".", "/")
    if path.is_dir():
        return dotted
    if path.with_suffix(".py").is_file():
        return _node(dotted.rpartition(".")[0], dotted)
    # A name inside a module (``from flott.x.y import Name`` resolved one level too deep).
    parent = dotted.rpartition(".")[0]
    return _folder_of_module(parent) if parent else None


def _imported_modules(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    if node.level:
        base = module.split(".")
        if not is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base)
        target = f"{prefix}.{node.module}" if node.module else prefix
    else:
        target = node.module or ""
    for alias in node.names:
        # ``from pkg import sub`` imports the submodule when there is one; else a name of pkg.
        yield f"{target}.{alias.name}"


def _is_type_checking_block(node: ast.stmt) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def _walk_imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import that can run, with whether it runs at module level (not inside a function).

    Only statement lists are walked (imports are statements); ``if TYPE_CHECKING:`` blocks never run
    and make no arrow.
    """

    def visit(
        statements: list[ast.stmt], in_function: bool
    ) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        for stmt in statements:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                yield stmt, not in_function
                continue
            if _is_type_checking_block(stmt):
                yield from visit(stmt.orelse, in_function)  # type: ignore[attr-defined]
                continue
            inner = in_function or isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
            for name in _STATEMENT_LISTS:
                for child in getattr(stmt, name, ()):
                    if isinstance(child, ast.ExceptHandler | ast.match_case):
                        yield from visit(child.body, inner)
                    elif isinstance(child, ast.stmt):
                        yield from visit([child], inner)

    yield from visit(tree.body, False)


def _marker_reason(line: str) -> str | None:
    at = line.find(DEFERRED_MARKER)
    if at < 0:
        return None
    return line[at + len(DEFERRED_MARKER) :].strip() or None


def deferred_reason(
    lines: list[str], stmt: ast.Import | ast.ImportFrom, run_start: dict[int, int]
) -> str | None:
    """The reason a function-level import is deferred, from a ``# deferred:`` comment on its own
    lines, or in the comment lines directly above it or above the run of import statements it
    ends (one comment may cover several imports that load the same thing).

    ``run_start`` maps the last line of each import statement to its first line.
    """
    for line in lines[stmt.lineno - 1 : (stmt.end_lineno or stmt.lineno)]:
        if (reason := _marker_reason(line)) is not None:
            return reason
    first = stmt.lineno
    while True:
        above = first - 1  # 1-based number of the line above
        while above >= 1 and lines[above - 1].strip().startswith("#"):
            if (reason := _marker_reason(lines[above - 1])) is not None:
                return reason
            above -= 1
        if above == first - 1 and above in run_start:  # an import statement right above: same run
            first = run_start[above]
            continue
        return None


def parse_module(file: Path) -> ast.Module:
    """``ast.parse`` with the garbage collector held off.

    On CPython 3.11 a collection during the conversion to Python objects can finalize an object
    that logs a traceback; 3.11's traceback printer parses source itself, re-entering the
    converter, which then fails with "AST constructor recursion depth mismatch".
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    finally:
        if was_enabled:
            gc.enable()


@functools.cache
def folder_graph() -> FolderGraph:
    """Read once per process: the tree does not change under a test run."""
    graph = FolderGraph()
    for file in sorted(PACKAGE.rglob("*.py")):
        rel = file.relative_to(ROOT)
        is_package = file.name == "__init__.py"
        module = ".".join(rel.with_suffix("").parts)
        if is_package:
            module = module.rpartition(".")[0]
        src_folder = _node(".".join(rel.parent.parts), module)
        tree = parse_module(file)
        lines = file.read_text(encoding="utf-8").splitlines()
        imports = list(_walk_imports(tree))
        run_start = {(node.end_lineno or node.lineno): node.lineno for node, _ in imports}
        for node, module_level in imports:
            reason = None if module_level else deferred_reason(lines, node, run_start)
            for dotted in _imported_modules(node, module, is_package):
                dst = _folder_of_module(dotted)
                if dst is not None:
                    graph.add(src_folder, dst, ImportSite(str(rel), node.lineno, module_level, reason))
    return graph


def folder_cycles(graph: FolderGraph) -> list[frozenset[str]]:
    """Strongly connected groups of more than one folder (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[frozenset[str]] = []
    counter = 0
    for start in sorted(graph.nodes()):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph.edges.get(start, {}))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.edges.get(child, {})))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    out.append(frozenset(group))
    return sorted(out, key=lambda g: sorted(g))


def arrows_between(graph: FolderGraph, lower: str, upper: str) -> dict[tuple[str, str], list[ImportSite]]:
    """Arrows from folders under ``lower`` into folders under ``upper`` (both dotted prefixes)."""

    def under(folder: str, prefix: str) -> bool:
        return folder == prefix or folder.startswith(prefix + ".")

    return {
        (src, dst): sites
        for src, targets in graph.edges.items()
        if under(src, lower)
        for dst, sites in targets.items()
        if under(dst, upper)
    }
