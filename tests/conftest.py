"""What every test shares."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(autouse=True)
def _flott_records_reach_caplog() -> None:
    """A job run in the test process gives the ``flott`` logger its own handlers and stops it
    propagating (a user's root handlers must not see flott's records); tests that read flott's
    records through ``caplog`` need them to reach the root logger again. What a user's process
    sees is tested in subprocesses (tests/cli/test_runtime_logging.py)."""
    logging.getLogger("flott").propagate = True
