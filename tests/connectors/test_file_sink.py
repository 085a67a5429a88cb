"""FileSink: Flink's bucket/part-file layout, committed files after end of input, rolling, formatting."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import cloudpickle
import pytest

from flott.common import Encoder, Row, Types
from flott.datastream.connectors.file_system import (
    BucketAssigner,
    FileCompactor,
    FileCompactStrategy,
    FileSink,
    OutputFileConfig,
    RollingPolicy,
    StreamingFileSink,
)

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def all_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def read_lines(files: list[Path]) -> list[str]:
    return [line for f in files for line in f.read_text().splitlines()]


def run_writers(sink: FileSink, batches: list[list[object]], parallelism: int, input_type=None) -> None:
    sink = cloudpickle.loads(cloudpickle.dumps(sink))
    writers = [sink.create_writer(i, parallelism, input_type) for i in range(parallelism)]
    for n, batch in enumerate(batches):
        writers[n % parallelism].write_batch(batch)
    for w in writers:
        w.flush(True)
        w.close()


def test_default_layout_date_time_buckets_and_committed_part_files(tmp_path: Path) -> None:
    sink = FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder()).build()
    before = dt.datetime.now().strftime("%Y-%m-%d--%H")
    run_writers(sink, [["a", "b"], ["c"], ["d"]], 2)
    after = dt.datetime.now().strftime("%Y-%m-%d--%H")
    files = all_files(tmp_path)
    assert len(files) == 2  # one part file per subtask
    for f in files:
        assert f.parent.name in (before, after)
        assert re.fullmatch(rf"part-{UUID}-0", f.name), f.name
    assert sorted(read_lines(files)) == ["a", "b", "c", "d"]


def test_prefix_suffix_base_path_assigner_and_no_in_progress_left(tmp_path: Path) -> None:
    sink = (
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
        .with_output_file_config(
            OutputFileConfig.builder().with_part_prefix("pre").with_part_suffix(".txt").build()
        )
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .build()
    )
    writer = sink.create_writer(0, 1, Types.TUPLE([Types.STRING(), Types.INT()]))
    writer.write_batch([("a", 1), ("b", 2)])
    writer.flush(False)
    hidden = [p.name for p in tmp_path.iterdir()]
    assert len(hidden) == 1 and re.fullmatch(rf"\.pre-{UUID}-0\.txt\.inprogress\.{UUID}", hidden[0])
    assert (tmp_path / hidden[0]).read_text() == "(a,1)\n(b,2)\n"  # flushed, still in progress
    writer.flush(True)
    writer.close()
    files = all_files(tmp_path)
    assert [f.name for f in files] == [hidden[0][1:].split(".inprogress.")[0]]
    assert re.fullmatch(rf"pre-{UUID}-0\.txt", files[0].name)
    assert files[0].read_text() == "(a,1)\n(b,2)\n"


def test_records_are_formatted_with_the_declared_type(tmp_path: Path) -> None:
    sink = (
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .build()
    )
    run_writers(sink, [[Row("x", 1.1)]], 1, Types.ROW([Types.STRING(), Types.FLOAT()]))
    run_writers(sink, [[("y", 2)]], 1, None)
    assert sorted(read_lines(all_files(tmp_path))) == ["('y', 2)", "+I[x, 1.1]"]


def test_size_rolling_rolls_before_the_record_after_the_size_is_exceeded(tmp_path: Path) -> None:
    sink = (
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=10))
        .build()
    )
    records = [f"r{i:03d}" for i in range(20)]  # 5 bytes per line
    run_writers(sink, [records[:7], records[7:8], records[8:]], 1)
    files = sorted(all_files(tmp_path), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    # Flink: roll when size > part_size before writing a record -> 3 records (15 bytes) per file.
    assert [len(f.read_bytes()) for f in files] == [15] * 6 + [10]
    assert read_lines(files) == records
    assert len({f.name.rsplit("-", 1)[0] for f in files}) == 1  # one bucket uuid, counters 0..6


def test_time_based_rolling(tmp_path: Path) -> None:
    sink = (
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_rolling_policy(RollingPolicy.default_rolling_policy(rollover_interval=1, inactivity_interval=1))
        .with_bucket_check_interval(0)
        .build()
    )
    writer = sink.create_writer(0, 1, None)
    writer.write_batch(["a"])
    import time

    time.sleep(0.01)
    writer.write_batch(["b"])  # the first file is older than the rollover interval: rolled first
    writer.flush(True)
    assert sorted(read_lines(all_files(tmp_path))) == ["a", "b"]
    assert len(all_files(tmp_path)) == 2


def test_on_checkpoint_rolling(tmp_path: Path) -> None:
    sink = (
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())
        .build()
    )
    writer = sink.create_writer(0, 1, None)
    writer.write_batch(["a"])
    writer.on_checkpoint(1)
    assert [f.name.startswith("part-") for f in all_files(tmp_path)] == [True]
    writer.write_batch(["b"])
    writer.close()  # no end of input: the second file stays in progress (hidden)
    names = sorted(f.name for f in all_files(tmp_path))
    assert len(names) == 2 and names[0].startswith(".part-") and ".inprogress." in names[0]


def test_custom_date_pattern_and_charset(tmp_path: Path) -> None:
    sink = (
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder("ISO-8859-1"))
        .with_bucket_assigner(BucketAssigner.date_time_bucket_assigner("'day='yyyyMMdd", "UTC"))
        .build()
    )
    run_writers(sink, [["é"]], 1)
    (f,) = all_files(tmp_path)
    assert f.parent.name == "day=" + dt.datetime.now(dt.UTC).strftime("%Y%m%d")
    assert f.read_bytes() == b"\xe9\n"
    with pytest.raises(ValueError):
        BucketAssigner.date_time_bucket_assigner("yyyy-QQ")


def test_streaming_file_sink_uses_legacy_names(tmp_path: Path) -> None:
    sink = (
        StreamingFileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .build()
    )
    run_writers(sink, [["a"], ["b"]], 2)
    assert sorted(f.name for f in all_files(tmp_path)) == ["part-0-0", "part-1-0"]


def test_unsupported_features_say_so(tmp_path: Path) -> None:
    with pytest.raises(NotImplementedError, match="bulk"):
        FileSink.for_bulk_format(str(tmp_path), None)
    builder = FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
    with pytest.raises(NotImplementedError, match="compaction"):
        builder.enable_compact(FileCompactStrategy.builder().build(), FileCompactor.concat_file_compactor())


def test_many_batches_many_subtasks_all_records_once(tmp_path: Path) -> None:
    sink = FileSink.for_row_format(os.fspath(tmp_path), Encoder.simple_string_encoder()).build()
    batches = [[f"{b}-{i}" for i in range(100)] for b in range(50)]
    run_writers(sink, batches, 4)
    got = read_lines(all_files(tmp_path))
    assert sorted(got) == sorted(r for b in batches for r in b)
    assert not any(".inprogress" in f.name for f in all_files(tmp_path))
