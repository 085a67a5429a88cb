"""The lanes' classifier (tests/lanes.py): what it reads as starting a process, and what not.

The helpers below are never called: the classifier only reads them.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests import lanes


def _pure_helper(x: int) -> int:
    return x * 2


def _runs_a_cli() -> None:
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def _indirect() -> int:
    _runs_a_cli()
    return _pure_helper(1)


@contextlib.contextmanager
def _cluster() -> Iterator[None]:
    from flott.runtime.minicluster.mini_cluster import MiniCluster

    yield MiniCluster  # type: ignore[misc]


def _uses_the_decorated_helper() -> None:
    with _cluster():
        pass


class _Server:
    def start(self) -> None:
        self.proc = subprocess.Popen(["true"])


class _SubServer(_Server):
    pass


def _makes_a_server() -> None:
    _SubServer()


def _executes_a_job(env: object) -> None:
    env.execute("job")  # type: ignore[attr-defined]


def _read(name: str) -> str | None:
    """What the classifier says of a helper above, looked up by name (naming the helpers in the
    tests themselves would put these tests in the process lane)."""
    return lanes.CodeReader().starter(globals()[name])


def test_pure_code_does_not_start_processes() -> None:
    assert _read("_pure_helper") is None


def test_a_process_started_directly_or_through_helpers_is_seen() -> None:
    assert _read("_runs_a_cli") == "subprocess.run"
    assert _read("_indirect") == "_runs_a_cli -> subprocess.run"
    assert _read("_uses_the_decorated_helper") == "_cluster -> MiniCluster"
    assert _read("_makes_a_server") == "_SubServer -> _Server -> subprocess.Popen"
    assert _read("_executes_a_job") == "env.execute"


def test_reading_tests_stays_in_the_fast_lane(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("processes") is None


def test_a_test_that_runs_a_cli_is_marked(pytester_like: None, request: pytest.FixtureRequest) -> None:
    # the fixture below starts a process: the mark comes from the fixture closure
    marker = request.node.get_closest_marker("processes")
    assert marker is not None and "pytester_like" in marker.kwargs["reason"]


@pytest.fixture
def pytester_like() -> Iterator[None]:
    proc = subprocess.run([sys.executable, "-c", "print('started')"], capture_output=True, text=True)
    assert proc.stdout == "started\n"
    yield


def test_the_fast_lane_is_recognised_from_the_mark_expression() -> None:
    class Config:
        def __init__(self, expr: str) -> None:
            self.expr = expr

        def getoption(self, name: str, default: str = "") -> str:
            return self.expr

    assert lanes._fast_lane(Config("not processes"))  # type: ignore[arg-type]
    assert lanes._fast_lane(Config("not processes and not slow"))  # type: ignore[arg-type]
    assert not lanes._fast_lane(Config("processes"))  # type: ignore[arg-type]
    assert not lanes._fast_lane(Config(""))  # type: ignore[arg-type]
