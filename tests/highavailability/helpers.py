"""Test contenders and listeners that record what the HA services tell them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class RecordingContender:
    def __init__(self, name: str, auto_confirm: Callable[[str], None] | None = None) -> None:
        self.name = name
        self.session_id: str | None = None
        self.events: list[tuple[str, str | None]] = []
        self.auto_confirm = auto_confirm
        self.errors: list[BaseException] = []

    @property
    def is_leader(self) -> bool:
        return self.session_id is not None

    def grant_leadership(self, session_id: str) -> None:
        self.session_id = session_id
        self.events.append(("grant", session_id))
        if self.auto_confirm is not None:
            self.auto_confirm(session_id)

    def revoke_leadership(self) -> None:
        self.events.append(("revoke", self.session_id))
        self.session_id = None

    def handle_error(self, error: BaseException) -> None:
        self.errors.append(error)


class RecordingListener:
    def __init__(self) -> None:
        self.address: str | None = None
        self.session_id: str | None = None
        self.history: list[tuple[str | None, str | None]] = []

    def notify_leader_address(self, address: str | None, session_id: str | None) -> None:
        self.address, self.session_id = address, session_id
        self.history.append((address, session_id))

    def handle_error(self, error: BaseException) -> None:
        raise AssertionError(f"unexpected retrieval error {error!r}")


async def eventually(cond: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> float:
    """Wait on the loop until ``cond()``; returns the seconds it took."""
    start = time.monotonic()
    while not cond():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.02)
    return time.monotonic() - start
