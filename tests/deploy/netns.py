"""Hosts for tests, played by Linux network namespaces on one machine (needs root and ``ip``).

:func:`network` builds one namespace per host, each with an ``eth0`` joined by a veth pair to a
bridge that lives in a namespace of its own (nothing is added to the machine's own namespace),
addresses in a private ``10.x.y.0/24``, and loopback up. The hosts share the filesystem (only
the network is separate), so an output directory is seen by all of them.

* ``host.popen(...)`` starts a process on a host (``ip netns exec``); the network remembers it
  and kills it by PID when it is torn down.
* ``host.get_json(url)`` asks a REST endpoint from that host (a short-lived Python there).
* ``net.cut(host)`` / ``net.restore(host)`` take the host's cable out and put it back
  (``ip link set <its port on the bridge> down/up``).

Everything made is removed when the ``with`` block ends, also when it fails: processes first
(SIGKILL by PID), then the namespaces (deleting the bridge's namespace destroys every veth pair).
:func:`unavailable_reason` says why namespaces cannot be used here, for a clear ``pytest.skip``.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_IP_TIMEOUT_S = 10.0
_GET_JSON = (
    "import sys, urllib.request\n"
    "with urllib.request.urlopen(sys.argv[1], timeout=float(sys.argv[2])) as r:\n"
    "    sys.stdout.write(r.read().decode())\n"
)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=_IP_TIMEOUT_S)


def unavailable_reason() -> str | None:
    """None if network namespaces can be created here, else why not."""
    if sys.platform != "linux":
        return f"network namespaces need Linux, this is {sys.platform}"
    if shutil.which("ip") is None:
        return "the 'ip' command (iproute2) is not installed"
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    probe = f"flott-probe-{uuid.uuid4().hex[:8]}"
    try:
        _ip("netns", "add", probe)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        detail = getattr(e, "stderr", "") or str(e)
        return f"'ip netns add' failed here: {detail.strip()}"
    with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
        _ip("netns", "del", probe)
    return None


@dataclass
class Host:
    name: str
    netns: str
    address: str
    port_on_bridge: str
    """This host's end of its cable in the bridge's namespace (what :meth:`Network.cut` downs)."""
    network: Network = field(repr=False)

    def command(self, *args: str) -> list[str]:
        return ["ip", "netns", "exec", self.netns, *args]

    def popen(self, args: Sequence[str], log: Path | None = None, **kwargs: Any) -> subprocess.Popen[bytes]:
        """Start ``args`` on this host; output to ``log`` (else discarded). Killed at teardown."""
        out: Any = subprocess.DEVNULL
        if log is not None:
            out = log.open("ab")
        try:
            proc = subprocess.Popen(
                self.command(*args), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, **kwargs
            )
        finally:
            if log is not None:
                out.close()
        self.network.processes.append(proc)
        return proc

    def run(self, args: Sequence[str], timeout: float, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args), capture_output=True, text=True, timeout=timeout, check=False, **kwargs
        )

    def get_json(self, url: str, timeout: float = 5.0) -> Any:
        """GET ``url`` from this host and parse the answer; raises OSError if it did not answer."""
        try:
            done = self.run([sys.executable, "-c", _GET_JSON, url, str(timeout)], timeout=timeout + 10)
        except subprocess.TimeoutExpired as e:
            raise OSError(f"GET {url} from {self.name}: no answer") from e
        if done.returncode != 0:
            raise OSError(f"GET {url} from {self.name}: {done.stderr.strip().splitlines()[-1:]}")
        return json.loads(done.stdout)


@dataclass
class Network:
    bridge_netns: str
    subnet: str
    hosts: dict[str, Host] = field(default_factory=dict)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

    def cut(self, host: Host) -> None:
        _ip("-n", self.bridge_netns, "link", "set", host.port_on_bridge, "down")

    def restore(self, host: Host) -> None:
        _ip("-n", self.bridge_netns, "link", "set", host.port_on_bridge, "up")

    def kill_processes(self) -> None:
        for proc in self.processes:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
        for proc in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)


def _build(network: Network, names: Sequence[str], tag: str, created: list[str]) -> None:
    br = network.bridge_netns
    _ip("netns", "add", br)
    created.append(br)
    _ip("-n", br, "link", "set", "lo", "up")
    _ip("-n", br, "link", "add", "br0", "type", "bridge")
    _ip("-n", br, "link", "set", "br0", "up")
    for i, name in enumerate(names, start=1):
        netns = f"flott-{tag}-{name}"
        _ip("netns", "add", netns)
        created.append(netns)
        port = f"p{i}-{tag}"[:15]
        # both ends are created in their namespaces: nothing appears in the machine's own
        _ip("link", "add", "name", "eth0", "netns", netns, "type", "veth", "peer", "name", port, "netns", br)
        address = f"{network.subnet}.{i}"
        _ip("-n", netns, "addr", "add", f"{address}/24", "dev", "eth0")
        _ip("-n", netns, "link", "set", "lo", "up")
        _ip("-n", netns, "link", "set", "eth0", "up")
        _ip("-n", br, "link", "set", port, "master", "br0")
        _ip("-n", br, "link", "set", port, "up")
        network.hosts[name] = Host(name, netns, address, port, network)


@contextlib.contextmanager
def network(names: Sequence[str]) -> Iterator[Network]:
    """Hosts ``names`` (``.1``, ``.2`` ... of a random private /24) on one bridge; see the module doc."""
    tag = uuid.uuid4().hex[:6]
    subnet = f"10.{random.randint(100, 250)}.{random.randint(0, 255)}"
    net = Network(bridge_netns=f"flott-{tag}-bridge", subnet=subnet)
    created: list[str] = []
    try:
        _build(net, names, tag, created)
        yield net
    finally:
        net.kill_processes()
        for netns in reversed(created):
            with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
                _ip("netns", "del", netns)
