"""Checkpointing SPI of connectors: source splits (snapshot/restore/rescale) and FileSink two-phase commit.

Sources: readers read part of their input, snapshot, read more (lost in the 'crash'), then the
pooled splits of all old subtasks are redistributed in contiguous shares over 1, 2 and 3 new
readers: (records before the snapshot) + (everything the restored readers read) must be exactly
the input, no record lost, none duplicated.
"""

from __future__ import annotations

import collections
import functools
import logging
import operator
import pickle
import random
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cloudpickle
import fsspec
import pytest

from flott.common import Duration, Encoder
from flott.datastream.connectors.base import (
    CheckpointedSourceReader,
    RestorableSource,
    TwoPhaseCommittingSink,
    TwoPhaseCommittingSinkWriter,
    is_two_phase_commit,
    restore_source_reader,
    snapshot_reader_state,
    split_share,
)
from flott.datastream.connectors.collection import CollectionSource
from flott.datastream.connectors.datagen import DataGeneratorSource, GeneratorFunction
from flott.datastream.connectors.file_system import (
    BucketAssigner,
    FileEnumeratorProvider,
    FileSink,
    FileSource,
    OutputFileConfig,
    RollingPolicy,
    StreamFormat,
    StreamingFileSink,
)
from flott.datastream.connectors.number_seq import NumberSequenceSource
from flott.datastream.connectors.print_sink import PrintSink

NEW_PARALLELISMS = (1, 2, 3)


# --- helpers ----------------------------------------------------------------------------------


def ship(obj: Any) -> Any:
    """As shipped to a TaskExecutor (cloudpickle) ..."""
    return cloudpickle.loads(cloudpickle.dumps(obj))


def as_lists(value: Any) -> Any:
    """... and splits as they might come back from a msgpack/JSON store: tuples become lists."""
    if isinstance(value, tuple | list):
        return [as_lists(v) for v in value]
    return value


def drain(reader: Any, max_records: int) -> list[Any]:
    out: list[Any] = []
    while (batch := reader.poll_batch(max_records)) is not None:
        assert len(batch) <= max_records
        out.extend(batch)
    reader.close()
    return out


def read_some(reader: Any, batches: int, max_records: int) -> list[Any]:
    out: list[Any] = []
    for _ in range(batches):
        batch = reader.poll_batch(max_records)
        if batch is None:
            break
        out.extend(batch)
    return out


def checkpoint_and_restore(
    source: Any,
    old_parallelism: int,
    expected: list[Any],
    *,
    max_records: int = 7,
    batches_before: Callable[[int], int] = lambda i: 3 + i,
    check_order: bool = True,
) -> None:
    """Read part, snapshot, read more (lost), restore at 1, 2, 3; check exactly-once."""
    source = ship(source)
    before: list[Any] = []
    pooled: list[Any] = []
    for i in range(old_parallelism):
        reader = source.create_reader(i, old_parallelism)
        assert isinstance(reader, CheckpointedSourceReader)
        before.extend(read_some(reader, batches_before(i), max_records))
        state = reader.snapshot_state(1)
        pooled.extend(pickle.loads(pickle.dumps(state, protocol=5)))  # the runtime pickles state
        read_some(reader, 2, max_records)  # after the barrier: must be read again after restore
        reader.close()
    for new_p in NEW_PARALLELISMS:
        restored_source = ship(source)
        after: list[Any] = []
        for i in range(new_p):
            splits = split_share(pooled, i, new_p)
            if i % 2:
                splits = as_lists(splits)
            reader = restored_source.restore_reader(i, new_p, splits)
            after.extend(drain(reader, max_records))
        got = before + after
        assert collections.Counter(got) == collections.Counter(expected), (old_parallelism, new_p)
        assert len(got) == len(expected)
        if check_order and old_parallelism == 1:
            assert got == expected  # one reader: the restored splits continue in order


# --- NumberSequenceSource -------------------------------------------------------------------------


@pytest.mark.parametrize("old_parallelism", [1, 2, 3, 5])
def test_number_sequence_restore_and_rescale(old_parallelism: int) -> None:
    source = NumberSequenceSource(10, 2009)
    assert isinstance(source, RestorableSource)
    checkpoint_and_restore(source, old_parallelism, list(range(10, 2010)))


def test_number_sequence_split_is_next_and_exclusive_end() -> None:
    reader = NumberSequenceSource(0, 99).create_reader(1, 2)  # owns 50..99
    assert reader.poll_batch(10) == list(range(50, 60))
    assert reader.snapshot_state(1) == [(60, 100)]
    restored = NumberSequenceSource(0, 99).restore_reader(0, 1, [(60, 100), [0, 3], (7, 7)])
    assert drain(restored, 1000) == [*range(60, 100), 0, 1, 2]


def test_snapshot_at_start_and_after_the_end() -> None:
    source = NumberSequenceSource(1, 20)
    reader = source.create_reader(0, 1)
    assert reader.snapshot_state(1) == [(1, 21)]
    assert drain(source.restore_reader(0, 1, reader.snapshot_state(1)), 6) == list(range(1, 21))
    drain(reader, 6)
    assert reader.snapshot_state(2) == []  # finished splits are left out


def test_restored_reader_without_splits_ends_at_once() -> None:
    sources: list[Any] = [
        NumberSequenceSource(0, 5),
        DataGeneratorSource(lambda i: i, 10),
        CollectionSource([1, 2]),
    ]
    for source in sources:
        assert source.restore_reader(2, 3, []).poll_batch(10) is None


def test_bad_splits_are_rejected() -> None:
    with pytest.raises(ValueError):
        NumberSequenceSource(0, 5).restore_reader(0, 1, [("a", 1)])
    with pytest.raises(ValueError):
        NumberSequenceSource(0, 5).restore_reader(0, 1, [(1, 2, 3)])


# --- DataGeneratorSource / CollectionSource ---------------------------------------------------------


class Squares(GeneratorFunction):
    def map(self, value: int) -> Any:
        return (value, value * value)


@pytest.mark.parametrize("old_parallelism", [1, 2, 4])
def test_datagen_restore_and_rescale(old_parallelism: int) -> None:
    checkpoint_and_restore(
        DataGeneratorSource(lambda i: f"rec-{i}", 1000), old_parallelism, [f"rec-{i}" for i in range(1000)]
    )
    checkpoint_and_restore(
        DataGeneratorSource(Squares(), 333), old_parallelism, [(i, i * i) for i in range(333)]
    )


def test_unbounded_datagen_continues_at_the_next_index() -> None:
    source = DataGeneratorSource(lambda i: i, None)
    readers = [source.create_reader(i, 2) for i in range(2)]
    seen = [read_some(r, 3, 5) for r in readers]
    pooled = [s for r in readers for s in r.snapshot_state(4)]
    nxt = [part[-1] + 1 for part in seen]
    restored = [source.restore_reader(i, 3, split_share(pooled, i, 3)) for i in range(3)]
    assert restored[0].poll_batch(4) == list(range(nxt[0], nxt[0] + 4))
    assert restored[1].poll_batch(4) == list(range(nxt[1], nxt[1] + 4))
    assert restored[2].poll_batch(4) is None  # two splits, three subtasks


@pytest.mark.parametrize("old_parallelism", [1, 2])
def test_collection_restore_and_rescale(old_parallelism: int) -> None:
    elements = [f"e{i % 97}" for i in range(500)]  # repeated values: counts must match exactly
    checkpoint_and_restore(CollectionSource(elements), old_parallelism, elements)


# --- FileSource ------------------------------------------------------------------------------------


def expected_lines(data: bytes, codec: str = "utf-8") -> list[str]:
    """BufferedReader.readLine semantics: \\n, \\r\\n and lone \\r end lines."""
    text = data.decode(codec, "replace")
    if not text:
        return []
    parts = re.split(r"\r\n|\r|\n", text)
    return parts[:-1] if re.search(r"(\r\n|\r|\n)$", text) else parts


def text_source(*paths: str, buffer: int, charset: str = "UTF-8", splittable: bool = True) -> FileSource:
    builder = FileSource.for_record_stream_format(StreamFormat.text_line_format(charset), *paths)
    builder.set_read_buffer_size(buffer)
    if not splittable:
        builder.set_file_enumerator(FileEnumeratorProvider.default_non_splittable_file_enumerator())
    return builder.build()


def write_inputs(root: Path) -> list[str]:
    """A few files with Flink's line rules in them; returns all lines in file order."""
    contents = {
        "a.txt": "".join(f"line {i} " + "x" * (i % 23) + "\n" for i in range(400)).encode(),
        "b.txt": b"one\r\ntwo\r\n\r\nthree\rfour\rfive\nsix\r\r\nseven\n\n\neight",
        "c.txt": b"",
        "d.txt": "".join(f"\u00e9\u20ac{i}\U0001f600\r" for i in range(150)).encode(),
        "e.txt": b"\n".join(f"{i:04d}".encode() * (1 + i % 9) for i in range(300)) + b"\n",
    }
    expected: list[str] = []
    for name, data in sorted(contents.items()):
        (root / name).write_bytes(data)
        expected += expected_lines(data)
    return expected


@pytest.mark.parametrize("old_parallelism", [1, 2, 3])
@pytest.mark.parametrize("buffer", [16, 100, 4096])
def test_file_source_restore_and_rescale(tmp_path: Path, old_parallelism: int, buffer: int) -> None:
    expected = write_inputs(tmp_path)
    source = text_source(str(tmp_path), buffer=buffer)
    for max_records in (1, 3, 50):
        for batches in (0, 1, 4, 17):
            checkpoint_and_restore(
                source,
                old_parallelism,
                expected,
                max_records=max_records,
                batches_before=functools.partial(operator.add, batches),
            )


def test_file_source_random_cuts(tmp_path: Path) -> None:
    rng = random.Random(7)
    alphabet = ["a", "\u00e9", "\u20ac", "\U0001f600", "\n", "\n", "\r\n", "\r", "xyz", "\r\r"]
    for trial in range(40):
        data = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120))).encode()
        f = tmp_path / f"r{trial}.txt"
        f.write_bytes(data)
        source = text_source(str(f), buffer=rng.choice([1, 2, 5, 64]))
        for old_p in (1, 2, 3):
            checkpoint_and_restore(
                source,
                old_p,
                expected_lines(data),
                max_records=rng.choice([1, 2, 3]),
                batches_before=lambda i: rng.randint(0, 6),
            )


def test_file_source_restores_at_the_exact_next_line(tmp_path: Path) -> None:
    lines = [f"row-{i}" for i in range(100)]
    f = tmp_path / "in.txt"
    f.write_text("\n".join(lines) + "\n")
    source = text_source(str(f), buffer=1 << 20)
    reader: Any = source.create_reader(0, 1)
    assert reader.poll_batch(10) == lines[:10]
    ((path, start, end, skip),) = reader.snapshot_state(1)
    assert (path, end, skip) == (str(f), f.stat().st_size, 0)
    assert start == len("".join(line + "\n" for line in lines[:10]))  # byte offset of row-10
    assert drain(source.restore_reader(0, 1, [(path, start, end, skip)]), 1000) == lines[10:]


def test_file_source_lone_cr_position_uses_skip_within_the_segment(tmp_path: Path) -> None:
    f = tmp_path / "cr.txt"
    f.write_bytes(b"a\nb\rc\rd\ne\n")
    source = text_source(str(f), buffer=1 << 20)
    reader: Any = source.create_reader(0, 1)
    assert reader.poll_batch(3) == ["a", "b", "c"]
    state = reader.snapshot_state(1)
    assert state == [(str(f), 2, 10, 2)]  # segment "b\rc\rd" starts at byte 2; b and c emitted
    assert drain(source.restore_reader(0, 1, state), 10) == ["d", "e"]


def test_file_source_snapshot_of_a_restored_reader_and_restore_again(tmp_path: Path) -> None:
    expected = write_inputs(tmp_path)
    source = text_source(str(tmp_path), buffer=32)
    got: list[str] = []
    fresh: list[Any] = [source.create_reader(i, 3) for i in range(3)]
    splits: list[Any] = [s for reader in fresh for s in reader.snapshot_state(0)]
    checkpoint = 0
    while splits:  # every round: restore at another parallelism, read a little, snapshot, 'crash'
        checkpoint += 1
        assert checkpoint < 1000
        p = 1 + checkpoint % 3
        pooled: list[Any] = []
        for i in range(p):
            reader: Any = source.restore_reader(i, p, split_share(splits, i, p))
            got += read_some(reader, 1 + (checkpoint + i) % 4, 5 + checkpoint % 7)
            pooled += reader.snapshot_state(checkpoint)
            read_some(reader, 3, 5)
            reader.close()
        splits = pooled
    assert collections.Counter(got) == collections.Counter(expected) and len(got) == len(expected)


@pytest.mark.parametrize("charset", ["UTF-16", "UTF-32-LE"])
def test_file_source_not_byte_splittable_charsets_restore_by_line_count(tmp_path: Path, charset: str) -> None:
    data = "".join(f"l\u00e9{i}\r\n" if i % 3 else f"{i}\r" for i in range(200)).encode(charset)
    f = tmp_path / "wide.txt"
    f.write_bytes(data)
    source = text_source(str(f), buffer=64, charset=charset)
    expected = expected_lines(data, charset)
    for old_p in (1, 2):
        checkpoint_and_restore(source, old_p, expected, max_records=9)
    reader: Any = source.create_reader(0, 1)
    emitted = read_some(reader, 3, 9)
    assert reader.snapshot_state(1) == [(str(f), 0, None, len(emitted))]
    reader.close()


def test_file_source_non_splittable_enumerator(tmp_path: Path) -> None:
    expected = write_inputs(tmp_path)
    checkpoint_and_restore(text_source(str(tmp_path), buffer=50, splittable=False), 2, expected)


def test_file_source_on_fsspec_url() -> None:
    root = f"memory://flott-ckpt-{uuid.uuid4()}"
    lines = [f"m{i}" for i in range(300)]
    with fsspec.open(f"{root}/in.txt", "wb") as out:
        out.write(("\n".join(lines) + "\n").encode())
    checkpoint_and_restore(text_source(root, buffer=40), 2, lines)


def test_continuous_file_source_restores_from_the_start(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x\ny\n")
    source = (
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(tmp_path))
        .monitor_continuously(Duration.of_millis(10))
        .build()
    )
    reader = source.create_reader(0, 1)
    assert snapshot_reader_state(reader, 1) is None  # cannot snapshot: no snapshot_state
    restored = restore_source_reader(source, 0, 1, None)
    got: list[str] = []
    for _ in range(100):
        got += restored.poll_batch(10) or []
        if len(got) == 2:
            break
    assert got == ["x", "y"]
    restored.close()
    reader.close()


def test_base_helpers() -> None:
    assert [split_share(list(range(5)), i, 3) for i in range(3)] == [[0, 1], [2, 3], [4]]
    assert [split_share([1], i, 3) for i in range(3)] == [[1], [], []]
    reader = NumberSequenceSource(0, 9).create_reader(0, 1)
    assert snapshot_reader_state(reader, 1) == [(0, 10)]
    assert restore_source_reader(NumberSequenceSource(0, 9), 0, 1, [(8, 10)]).poll_batch(5) == [8, 9]
    assert restore_source_reader(NumberSequenceSource(0, 9), 0, 1, None).poll_batch(3) == [0, 1, 2]


# --- FileSink: two-phase commit --------------------------------------------------------------------


def visible(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


def hidden(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name.startswith("."))


def lines_of(files: list[Path]) -> list[str]:
    return [line for f in files for line in f.read_text().splitlines()]


def file_sink(root: Path, part_size: int = 1 << 30, legacy: bool = False) -> FileSink:
    builder = (StreamingFileSink if legacy else FileSink).for_row_format(
        str(root), Encoder.simple_string_encoder()
    )
    return ship(
        builder.with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=part_size))
        .build()
    )


def test_file_sink_two_phase_commit_after_crash(tmp_path: Path) -> None:
    sink = file_sink(tmp_path, part_size=30)
    assert isinstance(sink, TwoPhaseCommittingSink)
    writer = sink.create_writer(0, 1, None)
    assert isinstance(writer, TwoPhaseCommittingSinkWriter) and is_two_phase_commit(sink, writer)
    writer.set_transactional(True)
    before = [f"before-{i:02d}-" + "x" * 10 for i in range(6)]
    writer.write_batch(before[:3])  # 3 x 20 bytes > part_size: the next record rolls the file
    writer.write_batch(before[3:])
    assert len(hidden(tmp_path)) >= 2  # the policy rolled: a pending file and an in-progress one
    assert visible(tmp_path) == []  # ... and rolled files stay invisible until committed
    committables = pickle.loads(pickle.dumps(writer.prepare_commit(1), protocol=5))
    assert len(committables) == len(hidden(tmp_path)) >= 2
    assert all(Path(ip).name.startswith(".") and Path(ip).exists() for ip, _ in committables)
    assert visible(tmp_path) == []
    writer.write_batch(["after-1", "after-2"])  # goes to a new part file
    writer.flush(False)
    writer.close()  # 'crash': no end of input
    assert visible(tmp_path) == []
    sink.commit(committables)
    sink.commit(committables)  # again, as after a restore: already committed, skipped
    assert lines_of(visible(tmp_path)) == before
    assert {str(p) for p in visible(tmp_path)} == {final for _, final in committables}
    assert lines_of(hidden(tmp_path)) == ["after-1", "after-2"]  # never committed: stays hidden


def test_file_sink_policy_rolled_file_invisible_until_committed(tmp_path: Path) -> None:
    sink = file_sink(tmp_path, part_size=5)
    writer: Any = sink.create_writer(0, 1, None)
    writer.set_transactional(True)
    writer.write_batch(["aaaaaa"])
    writer.write_batch(["bbbbbb"])  # rolls the first file: pending, not final
    writer.on_checkpoint(1)  # rolls the second one per the policy: pending too
    assert visible(tmp_path) == [] and len(hidden(tmp_path)) == 2
    committables = writer.prepare_commit(1)
    assert len(committables) == 2
    assert writer.prepare_commit(2) == []  # nothing written since
    sink.commit(committables[:1])
    assert lines_of(visible(tmp_path)) == ["aaaaaa"]
    sink.commit(committables)
    assert lines_of(visible(tmp_path)) == ["aaaaaa", "bbbbbb"]
    writer.close()


def test_file_sink_restore_new_attempt_names_are_unique_and_end_of_input_commits(tmp_path: Path) -> None:
    sink = file_sink(tmp_path)
    first = sink.create_writer(0, 1, None)
    first.set_transactional(True)
    first.write_batch(["a", "b"])
    c1 = first.prepare_commit(1)
    first.write_batch(["lost"])
    first.close()
    # restore: the runtime commits the restored committables, a new writer writes the replay
    sink.commit(c1)
    second = sink.create_writer(0, 1, None)
    second.set_transactional(True)
    second.write_batch(["c"])
    c2 = second.prepare_commit(2)  # checkpoint 2 never completes before end of input
    second.write_batch(["d"])
    second.flush(True)  # end of input: commits c2 and the rest itself
    second.close()
    sink.commit(c2)  # the runtime's late commit is harmless
    assert sorted(lines_of(visible(tmp_path))) == ["a", "b", "c", "d"]
    names = [p.name for p in visible(tmp_path)] + [p.name for p in hidden(tmp_path)]
    assert len({re.sub(r"\.inprogress\..*", "", n.lstrip(".")) for n in names}) == len(names)
    assert lines_of(hidden(tmp_path)) == ["lost"]


def test_file_sink_end_of_input_commits_pending_files(tmp_path: Path) -> None:
    sink = file_sink(tmp_path, part_size=3)
    writer = sink.create_writer(0, 1, None)
    writer.set_transactional(True)
    for i in range(5):
        writer.write_batch([f"r{i}"])
    assert visible(tmp_path) == []
    writer.flush(True)
    writer.close()
    assert sorted(lines_of(visible(tmp_path))) == [f"r{i}" for i in range(5)]
    assert hidden(tmp_path) == []


def test_file_sink_commit_of_missing_files_warns_and_skips(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sink = file_sink(tmp_path)
    with caplog.at_level(logging.WARNING):
        sink.commit([(str(tmp_path / ".gone.inprogress.x"), str(tmp_path / "gone"))])
    assert "gone" in caplog.text
    assert visible(tmp_path) == []
    with pytest.raises(ValueError):
        sink.commit(["not a pair"])


def test_set_transactional_only_before_the_first_write(tmp_path: Path) -> None:
    writer = file_sink(tmp_path).create_writer(0, 1, None)
    writer.write_batch(["x"])
    with pytest.raises(RuntimeError):
        writer.set_transactional(True)
    writer.close()


def test_non_transactional_prepare_commit_rolls_and_returns_open_files(tmp_path: Path) -> None:
    sink = file_sink(tmp_path, part_size=5)
    writer = sink.create_writer(0, 1, None)
    writer.write_batch(["aaaaaa"])
    writer.write_batch(["bbbbbb"])  # without set_transactional the roll is final at once
    assert lines_of(visible(tmp_path)) == ["aaaaaa"]
    committables = writer.prepare_commit(1)
    assert len(committables) == 1
    sink.commit(committables)
    assert lines_of(visible(tmp_path)) == ["aaaaaa", "bbbbbb"]
    writer.close()


def test_streaming_file_sink_legacy_names_continue_after_earlier_attempts(tmp_path: Path) -> None:
    sink = file_sink(tmp_path, legacy=True)
    first = sink.create_writer(0, 2, None)
    first.set_transactional(True)
    first.write_batch(["a"])
    c1 = first.prepare_commit(1)
    first.write_batch(["lost"])  # part-0-1, in progress, never committed
    first.close()
    sink.commit(c1)
    assert [p.name for p in visible(tmp_path)] == ["part-0-0"]
    second = sink.create_writer(0, 2, None)
    second.set_transactional(True)
    second.write_batch(["b"])
    second.flush(True)
    assert [p.name for p in visible(tmp_path)] == ["part-0-0", "part-0-2"]
    assert lines_of(visible(tmp_path)) == ["a", "b"]


def test_file_sink_transactional_with_buckets_prefix_and_fsspec() -> None:
    root = f"memory://flott-sink-{uuid.uuid4()}"
    sink = ship(
        FileSink.for_row_format(root, Encoder.simple_string_encoder())
        .with_output_file_config(OutputFileConfig("out", ".txt"))
        .build()
    )
    writer = sink.create_writer(0, 1, None)
    writer.set_transactional(True)
    writer.write_batch(["m1", "m2"])
    committables = writer.prepare_commit(1)
    writer.close()
    fs, path = fsspec.core.url_to_fs(root)
    assert [p for p in fs.find(path) if not p.rsplit("/", 1)[-1].startswith(".")] == []
    sink.commit(committables)
    sink.commit(committables)
    (final,) = [p for p in fs.find(path) if not p.rsplit("/", 1)[-1].startswith(".")]
    assert re.fullmatch(r"out-.*-0\.txt", final.rsplit("/", 1)[-1])
    assert fs.cat(final) == b"m1\nm2\n"


def test_sinks_without_two_phase_commit() -> None:
    sink = PrintSink()
    assert not is_two_phase_commit(sink, sink.create_writer(0, 1, None))
