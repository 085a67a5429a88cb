"""Which event loop flott's processes run on (uvloop by default, FLOTT_EVENT_LOOP to choose)."""

from __future__ import annotations

import asyncio

import pytest

from flott.errors import ConfigurationError
from flott.runtime.entrypoint import event_loop


async def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_default_is_uvloop_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvloop")
    monkeypatch.delenv(event_loop.ENV_VAR, raising=False)
    assert event_loop.run(_loop_module()).startswith("uvloop")


def test_asyncio_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(event_loop.ENV_VAR, "asyncio")
    assert event_loop.run(_loop_module()).startswith("asyncio")


def test_unknown_choice_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(event_loop.ENV_VAR, "trio")
    with pytest.raises(ConfigurationError, match="FLOTT_EVENT_LOOP='trio'"):
        event_loop.new_event_loop()
