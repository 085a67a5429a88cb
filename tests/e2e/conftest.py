"""Helpers for end-to-end tests on a real embedded cluster (TaskExecutor processes over TCP)."""

from __future__ import annotations

import collections
import contextlib
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from flott.client.pipeline_executor import EmbeddedExecutor, use_executor
from flott.common.job_status import JobStatus
from flott.configuration import Configuration


def generate_text(
    path: Path, lines: int, words_per_line: int = 10, vocabulary: int = 500, seed: int = 7
) -> Counter:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(vocabulary)]
    weights = [1.0 / (i + 1) for i in range(vocabulary)]
    counts: collections.Counter[str] = collections.Counter()
    with path.open("w") as f:
        for _ in range(lines):
            words = rng.choices(vocab, weights, k=words_per_line)
            counts.update(words)
            f.write(" ".join(words) + "\n")
    return counts


Counter = collections.Counter


def read_output_lines(directory: Path) -> list[str]:
    """Every line of every committed (non-hidden) file under ``directory``."""
    out: list[str] = []
    for p in sorted(directory.rglob("*")):
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(directory).parts):
            out.extend(p.read_text().splitlines())
    return out


def parse_tuple_line(line: str) -> tuple[str, int]:
    assert line.startswith("(") and line.endswith(")"), line
    word, count = line[1:-1].rsplit(",", 1)
    return word, int(count)


@contextlib.contextmanager
def embedded_executor(
    heartbeat_interval_ms: int = 500, heartbeat_timeout_ms: int = 5000, leftover_timeout_s: float = 15
) -> Iterator[EmbeddedExecutor]:
    """An embedded executor whose clusters the test can inspect; every worker must be gone after."""
    executor = EmbeddedExecutor(
        Configuration(
            {"heartbeat.interval": str(heartbeat_interval_ms), "heartbeat.timeout": str(heartbeat_timeout_ms)}
        )
    )
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with use_executor(executor):
        yield executor
    leftover = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    _gone, alive = psutil.wait_procs(leftover, timeout=leftover_timeout_s)
    for p in alive:
        p.kill()
    assert not alive, f"worker processes left behind: {[p.pid for p in alive]}"


@pytest.fixture
def embedded() -> Iterator[EmbeddedExecutor]:
    """An embedded executor (heartbeat timeout 5 s); every worker must be gone after the test."""
    with embedded_executor() as executor:
        yield executor


def task_executor_processes() -> list[psutil.Process]:
    """The TaskExecutor processes this test process started (to kill one mid-job)."""
    return [
        p
        for p in psutil.Process().children(recursive=True)
        if "flott.runtime.taskexecutor" in " ".join(p.cmdline())
    ]


def wait_running(client: Any, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while client.get_job_status().result() is not JobStatus.RUNNING:
        assert time.monotonic() < deadline, "job did not reach RUNNING"
        time.sleep(0.05)


def wait_committed_output(out: Path, timeout_s: float = 30.0) -> None:
    """Until a checkpoint completed and the sink committed something (the job is truly under way)."""
    deadline = time.monotonic() + timeout_s
    while not (out.exists() and read_output_lines(out)):
        assert time.monotonic() < deadline, "no output committed"
        time.sleep(0.05)


KEYS = 7
"""Keys of the running-count jobs whose output :func:`assert_exactly_once` checks (``n % KEYS``)."""


def assert_exactly_once(out: Path, n: int) -> None:
    """The committed ``(key,count)`` lines of a running count over ``range(n)`` keyed by ``n % KEYS``
    hold every update of every key once: nothing lost, nothing duplicated."""
    seen: dict[int, list[int]] = collections.defaultdict(list)
    for line in read_output_lines(out):
        key_text, count_text = line[1:-1].split(",")
        seen[int(key_text)].append(int(count_text))
    expected = collections.Counter(x % KEYS for x in range(n))
    for key, total in expected.items():
        updates = collections.Counter(seen[key])
        duplicated = sorted(c for c, times in updates.items() if times > 1)
        missing = sorted(set(range(1, total + 1)) - set(updates))
        assert not duplicated and not missing, (
            f"key {key}: {len(duplicated)} duplicated updates (first {duplicated[:5]}), "
            f"{len(missing)} missing (first {missing[:5]}) of {total}"
        )
    assert sum(len(v) for v in seen.values()) == n
