"""A private ZooKeeper server for tests: Debian's ``zookeeper`` package, one JVM, a free
loopback port, its own data dir, stopped by PID."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

JAVA_DIRS = ("/usr/share/zookeeper/lib", "/usr/share/java")
# Jars ZooKeeperServerMain needs; slf4j-simple logs to <workdir>/zookeeper.log.
_JARS = (
    "zookeeper.jar",
    "zookeeper-jute.jar",
    "slf4j-api.jar",
    "slf4j-simple.jar",
    "netty-all.jar",
    "metrics-core.jar",
    "snappy-java.jar",
    "commons-io.jar",
    "commons-cli.jar",
)


def find_classpath() -> str | None:
    """The server's classpath, or None if ZooKeeper (or Java) is not installed."""
    if shutil.which("java") is None:
        return None
    jars: list[str] = []
    for name in _JARS:
        found = [p for d in JAVA_DIRS for p in glob.glob(os.path.join(d, name))]
        if not found:
            if name.startswith("zookeeper"):
                return None
            continue
        jars.append(found[0])
    return ":".join(jars)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def four_letter(port: int, cmd: bytes = b"ruok", timeout: float = 1.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(cmd)
        out = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return out
            out += chunk


class ZooKeeperServer:
    """tickTime 200 ms: sessions may be 0.4 s .. 4 s, so expiry tests stay fast."""

    def __init__(self, workdir: Path, classpath: str, tick_ms: int = 200) -> None:
        self.workdir = workdir
        self.classpath = classpath
        self.tick_ms = tick_ms
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0, port: int | None = None) -> None:
        """Start (again, on ``port`` and with the same data directory when given)."""
        data = self.workdir / "data"
        data.mkdir(parents=True, exist_ok=True)
        last_error = ""
        for _attempt in range(3):  # a port may be taken between probing and binding
            self.port = port or free_port()
            cfg = self.workdir / "zoo.cfg"
            cfg.write_text(
                f"tickTime={self.tick_ms}\n"
                f"dataDir={data}\n"
                f"clientPort={self.port}\n"
                "clientPortAddress=127.0.0.1\n"
                f"maxSessionTimeout={20 * self.tick_ms}\n"
                "admin.enableServer=false\n"
                "4lw.commands.whitelist=*\n"
                "maxClientCnxns=0\n"
            )
            log = open(self.workdir / "zookeeper.log", "ab")
            self.proc = subprocess.Popen(
                [
                    "java",
                    "-Xmx256m",
                    "-XX:+UseSerialGC",
                    "-XX:TieredStopAtLevel=1",
                    "-Dzookeeper.4lw.commands.whitelist=*",
                    "-cp",
                    self.classpath,
                    "org.apache.zookeeper.server.ZooKeeperServerMain",
                    str(cfg),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            log.close()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    last_error = f"exited with {self.proc.returncode}"
                    break
                try:
                    if four_letter(self.port) == b"imok":
                        return
                except OSError as e:
                    last_error = repr(e)
                time.sleep(0.1)
            self.stop()
        tail = (self.workdir / "zookeeper.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"ZooKeeper did not start ({last_error}); log tail:\n{tail}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
