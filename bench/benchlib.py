"""Helpers shared by the benchmarks: the peers' virtualenv, processes, sampling, tables."""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
PEERS_VENV = Path(os.environ.get("FLOTT_BENCH_PEERS_VENV") or BENCH / ".venv-peers")
"""The peers' virtualenv: bench/.venv-peers, or ``FLOTT_BENCH_PEERS_VENV`` (a git worktree's bench/
has none of its own: point it at the main checkout's)."""
PEERS_PY = PEERS_VENV / "bin" / "python"

_peer_cache: dict[str, bool] = {}


def peer_available(module: str) -> bool:
    """Whether bench/.venv-peers exists and imports ``module`` (pyflink or bytewax)."""
    if module not in _peer_cache:
        ok = PEERS_PY.exists()
        if ok:
            ok = (
                subprocess.run(
                    [str(PEERS_PY), "-c", f"import {module}"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=120,
                ).returncode
                == 0
            )
        _peer_cache[module] = ok
    return _peer_cache[module]


def flink_home() -> Path:
    """The Flink distribution inside the apache-flink wheel (bin/, lib/, conf/, opt/)."""
    sites = sorted((PEERS_VENV / "lib").glob("python3*/site-packages/pyflink"))
    if not sites:
        raise FileNotFoundError("no pyflink in bench/.venv-peers (run bench/setup)")
    return sites[0]


def java_home() -> str | None:
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = subprocess.run(["sh", "-c", "readlink -f $(command -v java)"], capture_output=True, text=True)
    path = java.stdout.strip()
    return str(Path(path).parents[1]) if path else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_get(url: str, timeout: float = 10) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return bytes(r.read())


def get_json(url: str, timeout: float = 10) -> object:
    return json.loads(http_get(url, timeout))


def request_json(method: str, url: str, body: object = None, timeout: float = 30) -> object:
    """An HTTP request with a JSON body (if any); the JSON answer (None if empty)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        text = r.read()
    return json.loads(text) if text else None


def wait_until(check: Callable[[], object], timeout: float, what: str, interval: float = 0.01) -> float:
    """Poll ``check`` until it is truthy; returns the perf_counter() of success."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return time.perf_counter()
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")


def stop(proc: subprocess.Popen | None, timeout: float = 20, group: bool = False) -> None:  # type: ignore[type-arg]
    """Stop a process we started, by its PID (or its own process group when ``group``)."""
    if proc is None or proc.poll() is not None:
        return

    def send(sig: int) -> None:
        try:
            if group:
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
        except (ProcessLookupError, PermissionError):
            pass

    send(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        proc.wait(timeout=10)
    if group:  # stragglers in the group (e.g. a JVM's children)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class RssSampler:
    """Samples the RSS of a process tree every ``interval`` s; keeps each process's peak.

    ``label(proc, depth)`` names a process (the same label for processes that play
    the same role); peaks are kept per PID and reported per label.
    """

    def __init__(self, root_pid: int, label: Callable[[object, int], str | None], interval: float = 0.1):
        self.root_pid = root_pid
        self.label = label
        self.interval = interval
        self.peaks: dict[int, tuple[str, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.root_pid)
        except psutil.NoSuchProcess:
            return
        labels: dict[int, str | None] = {}
        while not self._stop.is_set():
            try:
                procs = [(root, 0)]
                stack = [(root, 0)]
                while stack:
                    p, d = stack.pop()
                    for c in p.children():
                        procs.append((c, d + 1))
                        stack.append((c, d + 1))
            except psutil.NoSuchProcess:
                procs = []
            for p, depth in procs:
                try:
                    name = labels.get(p.pid)
                    if name is None:  # a child forked but not yet exec'd is labelled later
                        name = labels[p.pid] = self.label(p, depth)
                    if name is None:
                        continue
                    rss = p.memory_info().rss
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    continue
                old = self.peaks.get(p.pid)
                if old is None or rss > old[1]:
                    self.peaks[p.pid] = (name, rss)
            self._stop.wait(self.interval)

    def by_label(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for name, rss in self.peaks.values():
            out.setdefault(name, []).append(rss)
        return out


# --- statistics and tables ----------------------------------------------------------------------
def summary(values: Sequence[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def ratio_cell(ratios: Sequence[float]) -> str:
    """Median of per-round ratios with their range."""
    if not ratios:
        return "–"
    med, lo, hi = summary(ratios)
    if len(ratios) == 1:
        return f"{med:.2f}×"
    return f"{med:.2f}× ({lo:.2f}–{hi:.2f})"


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)


def fmt_num(x: float, digits: int = 0) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e4:
        return f"{x / 1e3:.0f} k"
    return f"{x:,.{digits}f}"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- the summary table (bench/summary.py prints it; bench/run passes --summary FILE to each bench) --
def add_summary(
    path: str | os.PathLike[str] | None,
    key: str,
    measure: str,
    flott: str = "",
    peer: str = "",
    ratios: Sequence[float] = (),
    note: str = "",
) -> None:
    """Append one row of the summary table to ``path`` (JSON lines; nothing if ``path`` is None).

    ``key`` names the row in bench/summary.py's list (which holds its target, e.g. at least 2.0 times);
    ``ratios`` are the per-round ratios flott / peer as that row defines them (empty: not
    measured, ``note`` says why).
    """
    if not path:
        return
    row = {
        "key": key,
        "measure": measure,
        "flott": flott,
        "peer": peer,
        "ratios": [float(r) for r in ratios],
        "note": note,
    }
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def fmt_mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"
