"""A network namespace joined to the host by a veth pair, for partitioning one TaskExecutor from
the cluster in the chaos run (``ip netns``, root only): the TaskExecutor inside binds and advertises
the namespace's address, every other process advertises the host side of the pair, and a small TCP
forwarder lets the namespace reach the loopback-bound ZooKeeper. Cutting the host side of the pair
partitions the TaskExecutor from the JobManagers, the other TaskExecutors and ZooKeeper at once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import threading


class Namespace:
    """A network namespace joined to this host by a veth pair, and a TCP forwarder that lets the
    namespace reach the loopback-bound ZooKeeper. Created and deleted by this run (root only)."""

    def __init__(self) -> None:
        tag = os.getpid() % 10000
        octet = os.getpid() % 200 + 20
        self.name = f"flott-chaos-{os.getpid()}"
        self.host_if, self.ns_if = f"fch{tag}", f"fcn{tag}"
        self.host_ip, self.ns_ip = f"10.213.{octet}.1", f"10.213.{octet}.2"
        self.forward_port = 0
        self._forwarder: _Forwarder | None = None
        self.created = False

    def create(self, zk_port: int) -> None:
        steps = [
            ["ip", "netns", "add", self.name],
            ["ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if],
            ["ip", "link", "set", self.ns_if, "netns", self.name],
            ["ip", "addr", "add", f"{self.host_ip}/24", "dev", self.host_if],
            ["ip", "link", "set", self.host_if, "up"],
            ["ip", "netns", "exec", self.name, "ip", "addr", "add", f"{self.ns_ip}/24", "dev", self.ns_if],
            ["ip", "netns", "exec", self.name, "ip", "link", "set", self.ns_if, "up"],
            ["ip", "netns", "exec", self.name, "ip", "link", "set", "lo", "up"],
        ]
        self.created = True
        for step in steps:
            subprocess.run(step, check=True, capture_output=True)
        self._forwarder = _Forwarder(self.host_ip, ("127.0.0.1", zk_port))
        self.forward_port = self._forwarder.start()

    def host_config(self) -> dict[str, str]:
        return {
            "jobmanager.bind-host": "0.0.0.0",
            "jobmanager.rpc.address": self.host_ip,
            "taskmanager.bind-host": "0.0.0.0",
            "taskmanager.host": self.host_ip,
        }

    def namespace_config(self) -> dict[str, str]:
        return {
            "taskmanager.bind-host": self.ns_ip,
            "taskmanager.host": self.ns_ip,
            "high-availability.zookeeper.quorum": f"{self.host_ip}:{self.forward_port}",
        }

    def set_link(self, up: bool) -> None:
        subprocess.run(["ip", "link", "set", self.host_if, "up" if up else "down"], check=True)

    def delete(self) -> None:
        if self._forwarder is not None:
            self._forwarder.stop()
            self._forwarder = None
        if self.created:
            subprocess.run(["ip", "link", "del", self.host_if], check=False, capture_output=True)
            subprocess.run(["ip", "netns", "del", self.name], check=False, capture_output=True)
            self.created = False


class _Forwarder(threading.Thread):
    """Forwards TCP connections from ``host:<ephemeral>`` to ``target`` (on its own event loop)."""

    def __init__(self, host: str, target: tuple[str, int]) -> None:
        super().__init__(name="chaos-forwarder", daemon=True)
        self.host, self.target = host, target
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._ready = threading.Event()
        self._server: asyncio.base_events.Server | None = None

    def start(self) -> int:  # type: ignore[override]
        super().start()
        self._ready.wait(10)
        return self.port

    def run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, ConnectionError):
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            writer.close()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                up_reader, up_writer = await asyncio.open_connection(*self.target)
            except OSError:
                writer.close()
                return
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

        async def main() -> None:
            self._server = await asyncio.start_server(serve, self.host, 0)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()

        self.loop.run_until_complete(main())
        self.loop.run_forever()
        self.loop.close()

    def stop(self) -> None:
        def halt() -> None:
            if self._server is not None:
                self._server.close()
            self.loop.stop()

        self.loop.call_soon_threadsafe(halt)
        self.join(10)


def partition_unavailable() -> str | None:
    """Why the partition fault cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root for ip netns"
    if shutil.which("ip") is None:
        return "no ip command (iproute2)"
    probe = f"flott-chaos-probe-{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"ip netns add failed: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None
