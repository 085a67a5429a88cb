"""FileSource: every line exactly once at any parallelism, Flink's line rules, directories, URLs."""

from __future__ import annotations

import collections
import random
import re
import time
from pathlib import Path

import cloudpickle
import pytest

from flott.common import Duration, Types
from flott.datastream.connectors import Boundedness
from flott.datastream.connectors.file_system import (
    FileEnumeratorProvider,
    FileSource,
    FileSplitAssignerProvider,
    StreamFormat,
)

PARALLELISMS = (1, 2, 3, 7)


def flatten(parts) -> list:
    return [x for part in parts for x in part]


def expected_lines(data: bytes, codec: str = "utf-8") -> list[str]:
    """BufferedReader.readLine semantics: \\n, \\r\\n and lone \\r end lines."""
    text = data.decode(codec, "replace")
    if not text:
        return []
    parts = re.split(r"\r\n|\r|\n", text)
    return parts[:-1] if re.search(r"(\r\n|\r|\n)$", text) else parts


def read_all(source: FileSource, parallelism: int, max_records: int = 1000) -> list[list[str]]:
    """Lines per subtask, each reader drained until it reports the end."""
    source = cloudpickle.loads(cloudpickle.dumps(source))  # as shipped to a TaskExecutor
    per_subtask = []
    for i in range(parallelism):
        reader = source.create_reader(i, parallelism)
        lines: list[str] = []
        while (batch := reader.poll_batch(max_records)) is not None:
            assert len(batch) <= max_records
            lines.extend(batch)
        reader.close()
        per_subtask.append(lines)
    return per_subtask


def text_source(*paths: str, charset: str = "UTF-8", buffer: int | None = None) -> FileSource:
    builder = FileSource.for_record_stream_format(StreamFormat.text_line_format(charset), *paths)
    if buffer is not None:
        builder.set_read_buffer_size(buffer)
    return builder.process_static_file_set().build()


@pytest.mark.parametrize("parallelism", PARALLELISMS)
def test_one_file_every_line_exactly_once(tmp_path: Path, parallelism: int) -> None:
    lines = [f"line {i} " + "x" * (i % 37) for i in range(5000)]
    f = tmp_path / "big.txt"
    f.write_text("\n".join(lines) + "\n")
    parts = read_all(text_source(str(f), buffer=4096), parallelism)
    assert collections.Counter(flatten(parts)) == collections.Counter(lines)
    if parallelism > 1:
        assert sum(1 for p in parts if p) == parallelism  # one file, read by every subtask
    assert flatten(parts) == lines  # subtasks own consecutive ranges, in order


def test_line_rules_no_trailing_newline_empty_lines_crlf_and_cr(tmp_path: Path) -> None:
    data = b"a\n\nb\r\nc\rd\r\n\r\n\n last"
    f = tmp_path / "rules.txt"
    f.write_bytes(data)
    assert expected_lines(data) == ["a", "", "b", "c", "d", "", "", " last"]
    for p in PARALLELISMS:
        for buffer in (1, 3, 64):
            assert flatten(read_all(text_source(str(f), buffer=buffer), p)) == expected_lines(data)


def test_random_contents_with_multibyte_utf8_across_split_boundaries(tmp_path: Path) -> None:
    rng = random.Random(11)
    alphabet = ["a", "é", "€", "😀", "\n", "\n", "\r\n", "\r", "xyz", "ß"]
    for trial in range(60):
        data = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))).encode()
        f = tmp_path / f"r{trial}.txt"
        f.write_bytes(data)
        want = collections.Counter(expected_lines(data))
        for p in PARALLELISMS:
            for buffer in (1, 2, 7):
                got = collections.Counter(flatten(read_all(text_source(str(f), buffer=buffer), p, 3)))
                assert got == want, (data, p, buffer)


def test_invalid_utf8_becomes_replacement_character(tmp_path: Path) -> None:
    f = tmp_path / "bad.txt"
    f.write_bytes(b"ok\n\xff\xfebad\n")
    assert flatten(read_all(text_source(str(f)), 1)) == ["ok", "\ufffd\ufffdbad"]


@pytest.mark.parametrize("parallelism", PARALLELISMS)
def test_directory_recursive_skips_hidden(tmp_path: Path, parallelism: int) -> None:
    expected: list[str] = []
    for d in ("", "sub", "sub/deeper"):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
        for k in range(3):
            lines = [f"{d}/{k}/{i}" for i in range(k * 50)]
            expected += lines
            (tmp_path / d / f"part-{k}").write_text("\n".join(lines))
    (tmp_path / "_SUCCESS").write_text("hidden\n")
    (tmp_path / ".crc").write_text("hidden\n")
    (tmp_path / ".hidden_dir").mkdir()
    (tmp_path / ".hidden_dir" / "data").write_text("hidden\n")
    (tmp_path / "empty").write_text("")
    got = flatten(read_all(text_source(str(tmp_path), buffer=256), parallelism))
    assert collections.Counter(got) == collections.Counter(expected)


def test_several_paths_urls_and_explicit_hidden_file(tmp_path: Path) -> None:
    a = tmp_path / "a.txt"
    a.write_text("1\n2\n")
    b = tmp_path / "_b.txt"
    b.write_text("3\n")
    src = text_source(a.as_uri(), str(b))
    assert sorted(flatten(read_all(src, 2))) == ["1", "2", "3"]


def test_fsspec_memory_filesystem() -> None:
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe("/flott-test/in/x.txt", b"m1\nm2\n")
    fs.pipe("/flott-test/in/y.txt", b"m3")
    try:
        got = flatten(read_all(text_source("memory://flott-test/in", buffer=2), 3))
        assert sorted(got) == ["m1", "m2", "m3"]
    finally:
        fs.rm("/flott-test", recursive=True)


def test_other_charsets(tmp_path: Path) -> None:
    latin = tmp_path / "latin.txt"
    latin.write_bytes("café\nnaïve\n".encode("latin-1"))
    assert flatten(read_all(text_source(str(latin), charset="ISO-8859-1"), 3)) == ["café", "naïve"]
    utf16 = tmp_path / "utf16.txt"
    lines = [f"zeile {i} ü" for i in range(100)]
    utf16.write_bytes("\r\n".join(lines).encode("utf-16"))
    parts = read_all(text_source(str(utf16), charset="UTF-16", buffer=16), 3)
    assert flatten(parts) == lines and sum(1 for p in parts if p) == 1  # not byte-splittable


def test_non_splittable_enumerator_reads_whole_files(tmp_path: Path) -> None:
    for k in range(4):
        (tmp_path / f"f{k}").write_text("\n".join(f"{k}-{i}" for i in range(10)))
    src = (
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(tmp_path))
        .set_file_enumerator(FileEnumeratorProvider.default_non_splittable_file_enumerator())
        .build()
    )
    parts = read_all(src, 3)
    assert sorted(flatten(parts)) == sorted(f"{k}-{i}" for k in range(4) for i in range(10))
    for part in parts:  # every file entirely within one subtask
        assert len({line.split("-")[0] for line in part}) * 10 == len(part)


def test_the_locality_aware_assigner_is_the_default_and_nothing_else_is_taken(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("\n".join(str(i) for i in range(50)))
    builder = FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(tmp_path))
    src = builder.set_split_assigner(FileSplitAssignerProvider.locality_aware_split_assigner()).build()
    assert sorted(flatten(read_all(src, 3)), key=int) == [str(i) for i in range(50)]
    with pytest.raises(TypeError, match="locality_aware_split_assigner"):
        builder.set_split_assigner("round_robin")  # type: ignore[arg-type]


def test_empty_inputs_and_missing_path(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    assert read_all(text_source(str(tmp_path)), 3) == [[], [], []]
    with pytest.raises(FileNotFoundError):
        text_source(str(tmp_path / "nope")).create_reader(0, 1)


def test_boundedness_type_and_bulk_format() -> None:
    src = text_source("/tmp")
    assert src.get_boundedness() is Boundedness.BOUNDED
    assert src.get_produced_type() == Types.STRING()
    with pytest.raises(NotImplementedError, match="bulk"):
        FileSource.for_bulk_file_format(None, "/tmp")  # type: ignore[arg-type]


def test_monitor_continuously_picks_up_new_files(tmp_path: Path) -> None:
    (tmp_path / "first.txt").write_text("a\nb\n")
    src = (
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(tmp_path))
        .monitor_continuously(Duration.of_millis(20))
        .build()
    )
    assert src.get_boundedness() is Boundedness.CONTINUOUS_UNBOUNDED
    readers = [src.create_reader(i, 2) for i in range(2)]

    def drain_for(seconds: float) -> list[str]:
        got: list[str] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for r in readers:
                batch = r.poll_batch(100)
                assert batch is not None  # unbounded: never ends
                got.extend(batch)
        return got

    assert sorted(drain_for(0.2)) == ["a", "b"]
    (tmp_path / ".second.tmp").write_text("c\n")  # hidden while written, then moved in atomically
    (tmp_path / ".second.tmp").rename(tmp_path / "second.txt")
    assert drain_for(0.2) == ["c"]
    for r in readers:
        r.close()
