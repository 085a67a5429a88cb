"""Test lanes: every test that starts a process is marked ``processes``, without its author doing so.

``pytest -m "not processes"`` is the fast lane (tests in this process only: pure cores, operators on
threads, sockets on loopback); ``pytest`` runs both lanes. The mark is given at collection, by reading
the code a test runs before it runs: the test function, the fixtures it requests (with the fixtures
and helpers those use) and every function or class of ``tests/`` these name, followed transitively.
A test is a process test when that code names one of :data:`PROCESS_STARTERS` (``subprocess``,
``MiniCluster``, ``env.execute()``, ...). Reading names over-approximates (a name that is never
called still marks), which only moves a test to the slower lane.

What the reading cannot see (a process started deep inside flott behind a name not listed) is caught
when it happens: an audit hook (:func:`sys.addaudithook`, which ``subprocess.Popen``, ``os.fork``
and ``os.posix_spawn`` report to) sees every process this interpreter starts, in any thread. A test
that starts one without carrying the mark fails in a run that deselects process tests (the fast
lane would not be what it says), and gets a :class:`UnmarkedProcessTestWarning` in a full run.

For ``pytest-xdist``: tests that share a process-starting fixture of a wider scope than the function
(one ZooKeeper for the session, one cluster for a module) get an ``xdist_group`` of that fixture, so
``--dist loadgroup`` keeps them on one worker and starts that fixture once, not once per worker.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import threading
from collections.abc import Generator, Iterator
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent

PROCESS_STARTERS = frozenset(
    {
        # the standard library's ways to start a process
        "subprocess",
        "Popen",
        "create_subprocess_exec",
        "create_subprocess_shell",
        "multiprocessing",
        "ProcessPoolExecutor",
        "fork",
        "forkpty",
        "posix_spawn",
        "posix_spawnp",
        "spawnv",
        "spawnl",
        "execv",
        "execvp",
        # flott's: an embedded cluster starts TaskExecutor processes, env.execute() starts one
        "MiniCluster",
        "EmbeddedExecutor",
        "LocalProcessDriver",
        "enable_local_processes",
        "enable_workers_on_demand",
        "start_task_executor",
        "execute",
        "execute_async",
        "execute_and_collect",
    }
)
"""Names whose use marks a test as starting processes (as a name, an attribute or an import)."""

SPAWN_EVENTS = frozenset(
    {"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system", "os.exec"}
)
"""Audit events (PEP 578) that mean this interpreter starts or becomes another program."""

MARK = "processes"


class UnmarkedProcessTestWarning(pytest.PytestWarning):
    """A test started a process but was not classified as a process test."""


# --------------------------------------------------------------------------- reading the code


@functools.cache
def _definitions(filename: str) -> dict[int | str, ast.AST]:
    """Every ``def`` and ``class`` of a file, by the lines it starts on (its own and its decorators')
    and by its qualified name."""
    try:
        tree = ast.parse(Path(filename).read_text(), filename)
    except (OSError, SyntaxError, ValueError):
        return {}
    found: dict[int | str, ast.AST] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for line in [child.lineno, *(d.lineno for d in child.decorator_list)]:
                    found.setdefault(line, child)
                qualname = prefix + child.name
                found.setdefault(qualname, child)
                inner = ".<locals>." if not isinstance(child, ast.ClassDef) else "."
                visit(child, qualname + inner)
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


@functools.cache
def _is_test_file(filename: str) -> bool:
    return Path(filename).resolve().is_relative_to(TESTS)


def _source_file(obj: Any) -> str | None:
    if isinstance(obj, FunctionType):
        return obj.__code__.co_filename
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    return getattr(module, "__file__", None)


def _in_tests(obj: Any) -> bool:
    filename = _source_file(obj)
    return filename is not None and _is_test_file(filename)


def _definition(obj: Any) -> ast.AST | None:
    """The ``def`` or ``class`` node of a function or class defined under tests/."""
    filename = _source_file(obj)
    if filename is None:
        return None
    if isinstance(obj, FunctionType):
        return _definitions(filename).get(obj.__code__.co_firstlineno)
    return _definitions(filename).get(getattr(obj, "__qualname__", ""))


@functools.cache
def _names(node: ast.AST) -> tuple[tuple[str, ...], ...]:
    """Every name the code uses: plain names, dotted chains (``corpus.run_on_flott``) and imports."""
    return tuple(dict.fromkeys(_walk_names(node)))


def _walk_names(node: ast.AST) -> Iterator[tuple[str, ...]]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            yield (sub.id,)
        elif isinstance(sub, ast.Attribute):
            chain = [sub.attr]
            base: ast.expr = sub.value
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name):
                chain.append(base.id)
            yield tuple(reversed(chain))
        elif isinstance(sub, ast.ImportFrom | ast.Import):
            for alias in sub.names:
                yield tuple(alias.name.split("."))


def _resolve(chain: tuple[str, ...], namespace: dict[str, Any]) -> Any:
    if chain[0] not in namespace:
        return None
    obj = namespace[chain[0]]
    for part in chain[1:]:
        if not isinstance(obj, ModuleType | type):
            return obj
        obj = inspect.getattr_static(obj, part, None)
        if isinstance(obj, staticmethod | classmethod | property):
            obj = obj.fget if isinstance(obj, property) else obj.__func__
    try:
        return inspect.unwrap(obj) if callable(obj) else obj  # through decorators (contextmanager)
    except ValueError:
        return obj


class CodeReader:
    """Decides, by reading, whether code of tests/ can start a process; each object is read once."""

    def __init__(self) -> None:
        self._verdict: dict[int, str | None] = {}

    def starter(self, obj: Any) -> str | None:
        """The process-starting name ``obj``'s code reaches (with the path to it), or None."""
        obj = inspect.unwrap(obj) if callable(obj) else obj
        key = id(obj)
        if key in self._verdict:
            return self._verdict[key]
        self._verdict[key] = None  # recursion guard: a cycle adds nothing
        try:
            verdict = self._read(obj)
        except Exception:  # never break collection: the audit hook still checks at run time
            verdict = None
        self._verdict[key] = verdict
        return verdict

    def _read(self, obj: Any) -> str | None:
        node = _definition(obj)
        if node is None:
            return None
        namespace: dict[str, Any] = {}
        if isinstance(obj, FunctionType):
            namespace = obj.__globals__
        else:
            module = sys.modules.get(getattr(obj, "__module__", ""))
            namespace = vars(module) if module is not None else {}
        if isinstance(obj, type):
            for base in obj.__mro__[1:]:
                if _in_tests(base) and (found := self.starter(base)):
                    return f"{base.__name__} -> {found}"
        follow: list[Any] = []
        for chain in _names(node):
            hit = next((n for n in chain if n in PROCESS_STARTERS), None)
            if hit is not None:
                return ".".join(chain)
            target = _resolve(chain, namespace)
            if isinstance(target, FunctionType | type) and _in_tests(target):
                follow.append((chain, target))
        for chain, target in follow:
            if target is not obj and (found := self.starter(target)):
                return f"{'.'.join(chain)} -> {found}"
        return None


_reader = CodeReader()


def process_starter(item: pytest.Item) -> str | None:
    """Why ``item`` is a process test (the name that says so and how it is reached), or None."""
    function = getattr(item, "function", None)
    if function is not None and (found := _reader.starter(function)):
        return found
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in info.names_closure:
        for fixturedef in info.name2fixturedefs.get(name, ()):
            if _in_tests(fixturedef.func) and (found := _reader.starter(fixturedef.func)):
                return f"fixture {name} -> {found}"
    return None


def _shared_process_fixtures(item: pytest.Item) -> list[str]:
    """Process-starting fixtures of ``item`` that live longer than one test (``scope`` wider)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    shared = []
    for name in info.names_closure:
        for fixturedef in info.name2fixturedefs.get(name, ()):
            if fixturedef.scope != "function" and _in_tests(fixturedef.func):
                if _reader.starter(fixturedef.func):
                    where = "" if fixturedef.scope == "session" else f"@{item.path}"
                    shared.append(f"{name}{where}")
    return shared


# --------------------------------------------------------------------------- watching processes start


class SpawnWatch:
    """Counts the processes started while each test runs (setup, call and teardown)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.current: str | None = None
        self.started: dict[str, list[str]] = {}

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event in SPAWN_EVENTS and self.current is not None:
            what = event
            if event == "subprocess.Popen" and args:
                what = " ".join(str(a) for a in (args[1] or [args[0]])[:4]) if len(args) > 1 else str(args[0])
            with self._lock:
                self.started.setdefault(self.current, []).append(what)


_watch = SpawnWatch()


def _fast_lane(config: pytest.Config) -> bool:
    """This run leaves the process tests out (``-m "not processes"``)."""
    expr = config.getoption("markexpr", "") or ""
    if MARK not in expr:
        return False
    from _pytest.mark.expression import Expression

    def a_process_test_has(name: str, /, **kwargs: Any) -> bool:
        return name == MARK

    try:
        return not Expression.compile(expr).evaluate(a_process_test_has)
    except Exception:
        return False


# ------------------------------------------------------------ hooks (imported by tests/conftest.py)


def pytest_configure(config: pytest.Config) -> None:
    # the mark itself is declared in pyproject.toml ([tool.pytest.ini_options] markers)
    sys.addaudithook(_watch.audit)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker(MARK) is None and (why := process_starter(item)):
            item.add_marker(pytest.mark.processes(reason=why))
        shared = _shared_process_fixtures(item)
        if shared and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(shared[0]))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    _watch.current = item.nodeid
    try:
        return (yield)
    finally:
        _watch.current = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.when != "teardown":
        return report
    started = _watch.started.pop(item.nodeid, None)
    report.user_properties.append(("started_processes", len(started or ())))
    if not started or item.get_closest_marker(MARK) is not None:
        return report
    message = (
        f"{item.nodeid} started {len(started)} process(es) ({started[0]}) but is not marked "
        f"'{MARK}': tests/lanes.py did not see how. Name what starts it in PROCESS_STARTERS, "
        f"or mark the test @pytest.mark.{MARK}."
    )
    if _fast_lane(item.config) and report.outcome != "failed":
        report.outcome = "failed"
        report.longrepr = message
    else:
        item.warn(UnmarkedProcessTestWarning(message))
    return report


class LaneCount:
    """What the audit hook saw, per lane, for the summary at the end (also under xdist: it reads
    the reports the workers send)."""

    def __init__(self) -> None:
        self.marked_started = 0
        self.marked_quiet = 0
        self.unmarked_started = 0

    def add(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        started = dict(report.user_properties).get("started_processes")
        if started is None:
            return
        if MARK in report.keywords:
            if started:
                self.marked_started += 1
            else:
                self.marked_quiet += 1
        elif started:
            self.unmarked_started += 1


_count = LaneCount()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _count.add(report)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    c = _count
    if c.marked_started + c.marked_quiet + c.unmarked_started == 0:
        return
    terminalreporter.write_line(
        f"lanes: {c.marked_started + c.marked_quiet} '{MARK}' tests ran ({c.marked_quiet} started none "
        f"themselves: a shared fixture had, or only a name marked them); {c.unmarked_started} "
        "unmarked tests started processes"
    )
