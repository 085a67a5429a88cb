"""The word count's input and its user functions, shared by every runner.

This module imports nothing but the standard library so that the peers'
interpreter (bench/.venv-peers, with PyFlink and Bytewax) can import it too:
every system calls these very functions (split, pair, key, add).
"""

from __future__ import annotations

import os
import random
from pathlib import Path


def generate(
    path: Path, lines: int, vocabulary: int = 10_000, words_per_line: int = 10, seed: int = 42
) -> None:
    """``lines`` lines of ``words_per_line`` words drawn from a Zipf-like vocabulary (fixed seed)."""
    rng = random.Random(seed)
    vocab = [f"word{i}" for i in range(vocabulary)]
    cum = []
    total = 0.0
    for i in range(vocabulary):
        total += 1.0 / (i + 1)
        cum.append(total)
    with path.open("w") as f:
        batch = []
        for _ in range(lines):
            batch.append(" ".join(rng.choices(vocab, cum_weights=cum, k=words_per_line)))
            if len(batch) == 10_000:
                f.write("\n".join(batch) + "\n")
                batch = []
        if batch:
            f.write("\n".join(batch) + "\n")


# --- the user's functions: the same objects for every runner ----------------------------------
def split(line: str) -> list[str]:
    return line.split()


def pair(word: str) -> tuple[str, int]:
    return (word, 1)


def key(t: tuple[str, int]) -> str:
    return t[0]


def add(a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
    return (a[0], a[1] + b[1])


# --- the bare loops --------------------------------------------------------------------------
def line_ranges(path: Path, parts: int) -> list[tuple[int, int]]:
    """Byte ranges [start, end) covering the file, each starting at a line start."""
    size = path.stat().st_size
    bounds = [0]
    with path.open("rb") as f:
        for i in range(1, parts):
            f.seek(size * i // parts)
            f.readline()
            bounds.append(max(f.tell(), bounds[-1]))
    bounds.append(size)
    return [(bounds[i], bounds[i + 1]) for i in range(parts)]


def bare_count(path: str, start: int = 0, end: int | None = None) -> dict[str, tuple[str, int]]:
    """The per-record loop a user would write around the same functions (one process).

    Reads [start, end) in 4 MiB chunks cut at line ends; ``start`` must be a line start.
    """
    state: dict[str, tuple[str, int]] = {}
    get = state.get

    def count(text: str) -> None:
        for line in text.splitlines():
            for word in split(line):
                t = pair(word)
                k = key(t)
                old = get(k)
                state[k] = t if old is None else add(old, t)

    with open(path, "rb") as f:
        f.seek(start)
        remaining = (os.fstat(f.fileno()).st_size if end is None else end) - start
        tail = b""
        while remaining > 0:
            chunk = f.read(min(1 << 22, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            chunk = tail + chunk
            cut = chunk.rfind(b"\n") + 1
            tail = chunk[cut:]
            count(chunk[:cut].decode())
        if tail:
            count(tail.decode())
    return state


def bare_streaming_count(
    path: str, out: str, start: int = 0, end: int | None = None
) -> dict[str, tuple[str, int]]:
    """The STREAMING yardstick: the same loop, writing every running count as a sink line.

    What flott's and PyFlink's STREAMING word count do per word: split, pair,
    key, add, and one line ``(word,n)`` per update (Java's ``Tuple2.toString``,
    what ``Encoder.simple_string_encoder`` writes) to a buffered file.
    """
    state: dict[str, tuple[str, int]] = {}
    get = state.get
    with open(out, "w") as sink:
        write = sink.write

        def count(text: str) -> None:
            for line in text.splitlines():
                for word in split(line):
                    t = pair(word)
                    k = key(t)
                    old = get(k)
                    new = state[k] = t if old is None else add(old, t)
                    write(f"({new[0]},{new[1]})\n")

        with open(path, "rb") as f:
            f.seek(start)
            remaining = (os.fstat(f.fileno()).st_size if end is None else end) - start
            tail = b""
            while remaining > 0:
                chunk = f.read(min(1 << 22, remaining))
                if not chunk:
                    break
                remaining -= len(chunk)
                chunk = tail + chunk
                cut = chunk.rfind(b"\n") + 1
                tail = chunk[cut:]
                count(chunk[:cut].decode())
            if tail:
                count(tail.decode())
    return state


def split_into_files(path: Path, directory: Path, parts: int) -> list[Path]:
    """Copies of the input cut at line boundaries (for runners whose unit of parallelism is a file)."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    with path.open("rb") as f:
        for i, (start, end) in enumerate(line_ranges(path, parts)):
            f.seek(start)
            target = directory / f"part-{i}.txt"
            target.write_bytes(f.read(end - start))
            out.append(target)
    return out


def read_counts(directory: Path, updates: bool = False) -> dict[str, int]:
    """Counts from any runner's output: lines ``(word,n)`` (Flink/flott tuples) or ``word<TAB>n``.

    ``updates``: the output of a STREAMING run, every running count of a word
    (1, 2, ..., n, in whichever part files): the largest is its count.
    """
    counts: dict[str, int] = {}
    for root, _dirs, files in os.walk(directory):
        for name in files:
            if name.startswith("."):
                continue
            with open(os.path.join(root, name)) as f:
                for line in f:
                    line = line.rstrip("\n")
                    if not line:
                        continue
                    if line.startswith("(") and line.endswith(")"):
                        word, n = line[1:-1].rsplit(",", 1)
                    else:
                        word, n = line.split("\t")
                    if word in counts and not updates:
                        raise ValueError(f"{word!r} appears twice in the output")
                    counts[word] = max(int(n), counts.get(word, 0)) if updates else int(n)
    return counts
