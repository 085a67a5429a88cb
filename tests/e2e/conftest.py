"""Helpers for end-to-end tests on a real embedded cluster (TaskExecutor processes over TCP)."""

from __future__ import annotations

import collections
import random
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from flott.client.pipeline_executor import EmbeddedExecutor, use_executor
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


@pytest.fixture
def embedded() -> Iterator[EmbeddedExecutor]:
    """An embedded executor whose clusters the test can inspect; every worker must be gone after."""
    executor = EmbeddedExecutor(Configuration({"heartbeat.interval": "500", "heartbeat.timeout": "5000"}))
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with use_executor(executor):
        yield executor
    leftover = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    _gone, alive = psutil.wait_procs(leftover, timeout=10)
    for p in alive:
        p.kill()
    assert not alive, f"worker processes left behind: {[p.pid for p in alive]}"
