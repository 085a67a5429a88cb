"""Starts TaskExecutors as local processes (the ResourceManager's active driver for one machine).

Each TaskExecutor is ``python -m flott.runtime.taskexecutor`` with the cluster's
configuration: plain entries as ``-D key=value`` arguments, secrets (keys
:func:`~flott.configuration.is_sensitive` names) in the environment variable
:data:`SECRET_CONFIG_ENV` as JSON, because any user of the machine can read
every process's command line (``ps``) while a process's environment is readable
only by its owner. The child asks the kernel for SIGKILL when its parent dies
(``PR_SET_PDEATHSIG``), so no worker outlives an interrupted ``flott run``;
the driver also reports a child's exit at once, which is faster than waiting
for a heartbeat to time out.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable

from flott.configuration import SECRET_CONFIG_ENV, Configuration, secrets_environment, split_secrets

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1

__all__ = ["SECRET_CONFIG_ENV", "LocalProcessDriver"]


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass
    os.setpgrp()


class LocalProcessDriver:
    def __init__(
        self,
        config: Configuration,
        resource_manager_address: str,
        on_exit: Callable[[str, int], Awaitable[None]],
        on_start: Callable[[str], None] | None = None,
    ) -> None:
        self._config = config
        self._rm_address = resource_manager_address
        self._on_exit = on_exit
        self._on_start = on_start
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self._watchers: set[asyncio.Task[None]] = set()
        self._stopping = False

    def start_task_executor(self, resource_id: str) -> subprocess.Popen[bytes]:
        args = [
            sys.executable,
            "-m",
            "flott.runtime.taskexecutor",
            "--resource-manager",
            self._rm_address,
            "--resource-id",
            resource_id,
        ]
        plain, secrets = split_secrets(self._config.to_dict())
        for key, value in plain.items():
            args += ["-D", f"{key}={value}"]
        env = secrets_environment(secrets, os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        proc = subprocess.Popen(args, preexec_fn=_die_with_parent, env=env, stdin=subprocess.DEVNULL)
        self.processes[resource_id] = proc
        task = asyncio.get_running_loop().create_task(self._watch(resource_id, proc))
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)
        if self._on_start is not None:
            self._on_start(resource_id)
        return proc

    def stop_task_executor(self, resource_id: str, grace_s: float = 5.0) -> None:
        """Stop one worker (SIGTERM: it shuts down and exits 0), killed if still there after
        ``grace_s``; its exit is reported as any other."""
        proc = self.processes.get(resource_id)
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()

        def kill_if_alive() -> None:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()

        asyncio.get_running_loop().call_later(grace_s, kill_if_alive)

    async def _watch(self, resource_id: str, proc: subprocess.Popen[bytes]) -> None:
        # Polling, not a waiting thread: it must also work while the interpreter shuts down.
        while (code := proc.poll()) is None:
            await asyncio.sleep(0.05)
        self.processes.pop(resource_id, None)
        if not self._stopping:
            log.warning("TaskExecutor %s (pid %d) exited with code %d", resource_id, proc.pid, code)
            await self._on_exit(resource_id, code)

    async def stop_all(self, grace_s: float = 3.0) -> None:
        self._stopping = True
        procs = list(self.processes.values())
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                p.terminate()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace_s
        while any(p.poll() is None for p in procs) and loop.time() < deadline:
            await asyncio.sleep(0.02)
        for p in procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.kill()
                p.wait()
        for t in list(self._watchers):
            t.cancel()
        self.processes.clear()
