"""Where a flott process's runtime log goes: a log file, and only warnings on the console.

Flink writes each process's log to ``${env.log.dir}/flink-<user>-<process>-<host>.log``
(``log.file`` names the file itself) and keeps the console for the program's own output;
PyFlink's ``python job.py`` does the same for its embedded cluster. flott follows:

* the log directory is ``$FLOTT_LOG_DIR`` (Flink: ``$FLINK_LOG_DIR``), else ``env.log.dir``,
  else ``log`` under flott's run directory (``$FLOTT_RUN_DIR`` or ``<tmp>/flott-<uid>``);
* the file is ``log.file`` if set, else ``flott-<user>-<process>-<host>.log`` there;
* records at INFO and above go to the file (``ROOT_LOG_LEVEL``, the variable Flink's
  log4j files read, changes that), WARNING and above also to stderr.

In a user's own process (``python job.py``, ``flott run``) only the ``flott`` logger is
given these handlers, with ``propagate=False``: a program that configures the root logger
(``logging.basicConfig(stream=sys.stdout, level=logging.INFO)``, as PyFlink's examples do)
sees its own records only. In flott's own processes (JobManager, TaskExecutor) the root
logger gets them, so whatever a user function logs on a TaskExecutor lands in that
TaskExecutor's log file, as a Python UDF's logging does in Flink's TaskManager log.

The embedded cluster's TaskExecutor processes are given the client's ``log.file``: one
``python job.py`` run, one log file. Files are opened for appending (several processes
may share one; a record is one ``write``), created when the first record arrives.
"""

from __future__ import annotations

import getpass
import logging
import os
import socket
import sys
import tempfile
from pathlib import Path

from flott.configuration import Configuration

LOG_DIR_ENV = "FLOTT_LOG_DIR"
ROOT_LOG_LEVEL_ENV = "ROOT_LOG_LEVEL"
ENV_LOG_DIR = "env.log.dir"
LOG_FILE = "log.file"

FORMAT = "%(asctime)s %(levelname)-5s [%(process)d] %(name)s - %(message)s"
CONSOLE_FORMAT = "%(levelname)s %(name)s: %(message)s"

_FLOTT = "flott"
_OWN_HANDLER = "_flott_runtime_handler"


def run_dir() -> Path:
    """flott's per-user directory for pid files, process output and (by default) logs."""
    base = os.environ.get("FLOTT_RUN_DIR") or os.path.join(tempfile.gettempdir(), f"flott-{os.getuid()}")
    return Path(base)


def log_dir(config: Configuration) -> Path:
    env = os.environ.get(LOG_DIR_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    if config.contains(ENV_LOG_DIR) and config.get(ENV_LOG_DIR).strip():
        return Path(config.get(ENV_LOG_DIR).strip()).expanduser()
    return run_dir() / "log"


def log_file(config: Configuration, process: str) -> Path:
    """The file this process logs to: ``log.file``, or Flink's name pattern in :func:`log_dir`."""
    if config.contains(LOG_FILE) and config.get(LOG_FILE).strip():
        return Path(config.get(LOG_FILE).strip()).expanduser()
    return log_dir(config) / f"flott-{_user()}-{process}-{socket.gethostname()}.log"


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def _file_level() -> int:
    raw = os.environ.get(ROOT_LOG_LEVEL_ENV, "").strip().upper()
    level = logging.getLevelName(raw) if raw else logging.INFO
    return level if isinstance(level, int) else logging.INFO


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a record arrives (a program, or a test, may
    replace it after flott's logging was set up)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, _value: object) -> None:
        pass


def configure_logging(
    config: Configuration,
    process: str,
    *,
    own_process: bool,
    console_level: int = logging.WARNING,
) -> Path:
    """Send this process's runtime log to its file and warnings to stderr; returns the file.

    ``own_process``: a flott process (JobManager, TaskExecutor), whose root logger flott
    owns; otherwise only the ``flott`` logger is configured and it stops propagating.
    Calling it again replaces the handlers it installed before (not anybody else's).
    """
    path = log_file(config, process)
    file_level = min(_file_level(), console_level)
    target = logging.getLogger() if own_process else logging.getLogger(_FLOTT)
    for h in list(target.handlers):
        if getattr(h, _OWN_HANDLER, False):
            target.removeHandler(h)
            h.close()
    handlers: list[logging.Handler] = []
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        file_handler: logging.Handler = logging.FileHandler(path, mode="a", encoding="utf-8", delay=True)
        file_handler.setLevel(file_level)
        file_handler.setFormatter(logging.Formatter(FORMAT))
        handlers.append(file_handler)
    except OSError as e:  # an unwritable log directory must not keep the job from running
        print(f"flott: cannot write the log file {path} ({e.strerror}); logging to stderr", file=sys.stderr)
        console_level = min(console_level, file_level)
    console = _StderrHandler()
    console.setLevel(console_level)
    console.setFormatter(logging.Formatter(CONSOLE_FORMAT))
    handlers.append(console)
    for h in handlers:
        setattr(h, _OWN_HANDLER, True)
        target.addHandler(h)
    target.setLevel(min(file_level, console_level))
    if own_process:
        logging.getLogger(_FLOTT).setLevel(logging.NOTSET)
        logging.getLogger(_FLOTT).propagate = True
        # one INFO line per REST request would bury the JobManager's log (Flink logs none)
        logging.getLogger("aiohttp.access").setLevel(max(logging.WARNING, file_level))
    else:
        logging.getLogger(_FLOTT).propagate = False
    return path


def configured_log_file() -> Path | None:
    """The file flott's records go to in this process, if :func:`configure_logging` ran."""
    for logger in (logging.getLogger(_FLOTT), logging.getLogger()):
        for h in logger.handlers:
            if getattr(h, _OWN_HANDLER, False) and isinstance(h, logging.FileHandler):
                return Path(h.baseFilename)
    return None


def ensure_client_logging(config: Configuration) -> Path:
    """A user's process about to start an embedded cluster: configure flott's logger unless
    a launcher (``flott run``) already did; returns the file the cluster should log to."""
    current = configured_log_file()
    if current is not None:
        return current
    return configure_logging(config, "python", own_process=False)
