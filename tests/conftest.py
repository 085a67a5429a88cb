"""What every test shares."""

from __future__ import annotations

import logging
import os
import sys
import tempfile

import pytest


def _cache_bytecode_for_test_processes() -> None:
    """Let this process and every process it starts keep compiled bytecode, outside the tree.

    Machines of this project's kind set ``PYTHONDONTWRITEBYTECODE=1``, so every TaskExecutor,
    JobManager, CLI and corpus program a test starts compiled flott's ~150 modules from source
    again: 0.4 s of CPU per process, about 40 % of a TaskExecutor's start-up and of a corpus
    program's CPU (3.3 s -> 1.9 s for ``map_filter``, measured with ``/usr/bin/time``), and pytest
    rewrote every test module's asserts anew each run. The cache goes to a directory of its own
    under the temporary directory (``PYTHONPYCACHEPREFIX``), so no ``__pycache__`` appears in the
    tree; Python checks each entry against its source's mtime and size, so edits are picked up.
    """
    if not (sys.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE")):
        return
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or os.path.join(
        tempfile.gettempdir(), f"flott-test-pycache-{os.getuid()}"
    )
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.dont_write_bytecode = False
    sys.pycache_prefix = prefix


_cache_bytecode_for_test_processes()


@pytest.fixture(autouse=True)
def _flott_records_reach_caplog() -> None:
    """A job run in the test process gives the ``flott`` logger its own handlers and stops it
    propagating (a user's root handlers must not see flott's records); tests that read flott's
    records through ``caplog`` need them to reach the root logger again. What a user's process
    sees is tested in subprocesses (tests/cli/test_runtime_logging.py)."""
    logging.getLogger("flott").propagate = True


# The lanes (the ``processes`` mark, given automatically, and the check that it is right).
from tests.lanes import (  # noqa: E402
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_runtest_logreport,
    pytest_runtest_makereport,
    pytest_runtest_protocol,
    pytest_terminal_summary,
)

__all__ = [
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_runtest_logreport",
    "pytest_runtest_makereport",
    "pytest_runtest_protocol",
    "pytest_terminal_summary",
]
