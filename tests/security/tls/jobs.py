"""A word-count program for the TLS tests, as a user writes it, and the files it runs on.

Its splitting function lives in a second module shipped with ``-pyfs``: the TaskExecutors can
only run it after fetching that file from the BlobServer, so a run exercises RPC, the BlobServer
and (parallelism 2, a keyBy, one slot per TaskExecutor) data exchange between TaskExecutors.
"""

from __future__ import annotations

import collections
import random
from pathlib import Path

PROGRAM = '''
import sys

from flott.common import Encoder, Types
from flott.common import WatermarkStrategy
from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.datastream.connectors.file_system import FileSink, FileSource, StreamFormat

from tls_words import split


def main(input_path: str, output_path: str) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(2)
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), input_path).build()
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "lines").uid("lines")
        .flat_map(split)
        .map(lambda w: (w, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda p: p[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1])).uid("counts")
        .map(lambda p: f"{p[0]} {p[1]}", output_type=Types.STRING())
        .sink_to(FileSink.for_row_format(output_path, Encoder.simple_string_encoder()).build())
        .uid("sink")
    )
    env.execute("tls_word_count")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
'''

SPLITTER = '''
def split(line):
    yield from line.split()
'''


def write_program(directory: Path) -> tuple[Path, Path]:
    """(the program, the module it ships with ``-pyfs``)."""
    directory.mkdir(parents=True, exist_ok=True)
    program, splitter = directory / "tls_word_count.py", directory / "tls_words.py"
    program.write_text(PROGRAM)
    splitter.write_text(SPLITTER)
    return program, splitter


def write_input(path: Path, lines: int, seed: int = 7) -> collections.Counter[str]:
    """A text of ``lines`` lines over a few hundred words; the counts a word count must print."""
    rng = random.Random(seed)
    vocabulary = [f"w{i:03d}" for i in range(300)]
    counts: collections.Counter[str] = collections.Counter()
    with path.open("w") as f:
        for _ in range(lines):
            words = rng.choices(vocabulary, k=10)
            counts.update(words)
            f.write(" ".join(words) + "\n")
    return counts


def read_counts(output: Path) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    for part in output.rglob("*"):
        if part.is_file() and not part.name.startswith("."):
            for line in part.read_text().splitlines():
                word, _, n = line.rpartition(" ")
                assert word not in counts, f"{word} printed twice"
                counts[word] = int(n)
    return counts
