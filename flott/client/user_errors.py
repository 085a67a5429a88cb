"""How an error reaches the user of ``python job.py``: their own frames, not flott's.

A failing job surfaces in ``env.execute()`` as a :class:`~flott.errors.JobExecutionError`
whose message holds the failing function's exception and its traceback on the
TaskExecutor (as Flink shows the Python exception of a UDF). Python's default hook would
print that wrapped in flott's frames (``completable_future.py``, ``job_client.py``) and the
cause chain; this hook prints the program's frames and the message only. It acts on
flott's user-facing errors alone (a failed or refused job, a feature flott lacks, a bad
configuration value, a REST token missing or without the role a call needs); every other
exception goes to the hook that was installed before.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from types import TracebackType

from flott.errors import (
    AuthenticationError,
    AuthorizationError,
    ConfigurationError,
    FlottError,
    JobExecutionError,
    JobSubmissionError,
    NotYetSupportedError,
)

USER_FACING: tuple[type[FlottError], ...] = (
    JobExecutionError,
    JobSubmissionError,
    NotYetSupportedError,
    ConfigurationError,
    AuthenticationError,
    AuthorizationError,
)

_FLOTT_DIR = Path(__file__).resolve().parent.parent


def _is_flott_frame(filename: str) -> bool:
    if filename.startswith("<frozen runpy"):
        return True
    try:
        return Path(filename).resolve().is_relative_to(_FLOTT_DIR)
    except (OSError, ValueError):
        return False


def user_frames(tb: TracebackType | None) -> traceback.StackSummary:
    """The frames of ``tb`` outside flott's package (and runpy's), outermost first."""
    frames = traceback.extract_tb(tb)
    return traceback.StackSummary.from_list([f for f in frames if not _is_flott_frame(f.filename)])


def format_user_error(error: BaseException) -> str:
    """``error`` as Python prints it, with flott's frames and the cause chain left out."""
    frames = user_frames(error.__traceback__)
    head = ["Traceback (most recent call last):\n", *frames.format()] if frames else []
    return "".join(head + traceback.format_exception_only(type(error), error))


def _hook(
    exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
) -> None:  # pragma: no cover - runs as the interpreter exits
    if isinstance(exc, USER_FACING):
        sys.stderr.write(format_user_error(exc))
        return
    _previous(exc_type, exc, tb)


_previous = sys.excepthook


def install() -> None:
    """Make uncaught user-facing flott errors print as :func:`format_user_error` (idempotent)."""
    global _previous
    if sys.excepthook is not _hook:
        _previous = sys.excepthook
        sys.excepthook = _hook
