"""Property tests of what the JobManager reads from clients: the JobGraph a ``POST /jobs`` carries,
and a savepoint's ``_metadata`` (a client names the path, so the file may hold anything).

For arbitrary bytes, mutations of a real encoding and values of the right shape but wrong content,
each decoder either decodes or raises its typed error of flott's tree (``InvalidJobGraphError``,
``SnapshotFormatError``), never anything else, and never runs code (a JobGraph's user-code blobs
are pickles; the JobManager must not load them). Inputs are bounded in size, so ``deadline=None``
does not hide a slow case: a few hundred examples take seconds. A plain example test beside each
property pins every bug the properties found.

The multipart parser of ``POST /jobs`` is tested the same way, in
:mod:`tests.security.test_submission_properties`.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flott.errors import InvalidJobGraphError
from flott.runtime.checkpoint.errors import SnapshotFormatError
from flott.runtime.checkpoint.metadata import (
    CheckpointMetadata,
    KeyGroupStateHandle,
    OperatorListStateInfo,
    OperatorMetadata,
    OperatorStateHandle,
    checked_state_files,
    decode_metadata,
    encode_metadata,
)
from flott.runtime.jobgraph import JobGraph, decode_job_graph, encode_job_graph
from tests.rest.jobs import bounded_job

BOUNDED = settings(
    max_examples=250,
    deadline=None,  # inputs are size-bounded below; a loaded machine must not fail a test on time
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,  # the same examples in every run (CI is reproducible)
    database=None,
)
SHAPED = settings(BOUNDED, max_examples=80)
"""Structured values cost more to generate than bytes: fewer of them."""
MAX_BYTES = 4096


def _mutations(data: bytes) -> st.SearchStrategy[bytes]:
    """``data`` with a few bytes flipped, cut, inserted or repeated."""
    n = len(data)

    def apply(ops: list[tuple[str, int, int, bytes]]) -> bytes:
        out = bytearray(data)
        for kind, i, j, junk in ops:
            i, j = (i % (len(out) + 1), j % (len(out) + 1)) if out else (0, 0)
            lo, hi = min(i, j), max(i, j)
            if kind == "flip" and i < len(out):
                out[i] ^= junk[0] if junk else 0xFF
            elif kind == "cut":
                del out[lo:hi]
            elif kind == "insert":
                out[i:i] = junk
            elif kind == "repeat":
                out[i:i] = out[lo:hi][:256]
            elif kind == "truncate":
                del out[i:]
        return bytes(out[: MAX_BYTES * 4])

    op = st.tuples(
        st.sampled_from(["flip", "cut", "insert", "repeat", "truncate"]),
        st.integers(0, max(n, 1)),
        st.integers(0, max(n, 1)),
        st.binary(min_size=1, max_size=16),
    )
    return st.lists(op, min_size=1, max_size=4).map(apply)


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=True)
    | st.text(max_size=12)
    | st.binary(max_size=12)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)


def _nested(depth: int, leaf: bytes, array_header: bytes) -> bytes:
    return array_header * depth + leaf


# -- the JobGraph decoder ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph_bytes() -> bytes:
    return encode_job_graph(bounded_job("property", n=3))


def _decodes_or_refuses(data: bytes) -> JobGraph | None:
    try:
        graph = decode_job_graph(data)
    except InvalidJobGraphError:
        return None
    # What the JobManager then does with an accepted graph must not fail either.
    graph.topological_order()
    graph.slots_needed()
    assert decode_job_graph(encode_job_graph(graph)) == graph
    return graph


@BOUNDED
@given(data=st.binary(max_size=MAX_BYTES))
def test_job_graph_decoder_on_arbitrary_bytes(data: bytes) -> None:
    _decodes_or_refuses(data)


@BOUNDED
@given(data=st.data())
def test_job_graph_decoder_on_mutated_graphs(graph_bytes: bytes, data: st.DataObject) -> None:
    _decodes_or_refuses(data.draw(_mutations(graph_bytes)))


_IDS = st.sampled_from(["a", "b", "c", "0" * 32])
_OPERATOR = st.fixed_dictionaries(
    {
        "operator_id": _IDS,
        "name": st.text(max_size=6),
        "kind": st.sampled_from(["source", "map", "sink", ""]),
    },
    optional={"function": _IDS, "key_selector": _IDS, "config": _VALUES, "uid": _VALUES},
)
_VERTEX = st.fixed_dictionaries(
    {
        "id": _IDS,
        "name": st.text(max_size=6),
        "parallelism": st.integers(-2, 2**63 - 1),
        "max_parallelism": st.integers(-2, 2**63 - 1),
        "operators": st.lists(_OPERATOR, max_size=3),
    },
    optional={"slot_sharing_group": _VALUES},
)
_EDGE = st.fixed_dictionaries(
    {
        "id": _IDS,
        "source": _IDS,
        "target": _IDS,
        "partitioner": st.fixed_dictionaries(
            {"kind": st.sampled_from(["forward", "hash", "rebalance", "custom", "broadcast", "nope"])},
            optional={"key_selector": _IDS | st.none()},
        ),
    },
    optional={"target_input": _VALUES},
)
_GRAPH = st.fixed_dictionaries(
    {
        "job_id": st.sampled_from(["0" * 32, "f" * 32, "F" * 32, "x"]),
        "job_name": st.text(max_size=6),
        "vertices": st.lists(_VERTEX, max_size=4),
        "edges": st.lists(_EDGE, max_size=4),
    },
    optional={
        "config": st.dictionaries(st.text(max_size=6), st.text(max_size=6) | _VALUES, max_size=3),
        "user_artifacts": st.dictionaries(_IDS, st.binary(max_size=8), max_size=3),
        "savepoint_path": _VALUES,
        "allow_non_restored_state": _VALUES,
        "format_version": st.integers(-1, 3),
    },
)


@SHAPED
@given(value=_GRAPH | _VALUES)
def test_job_graph_decoder_on_graph_shaped_values(value: Any) -> None:
    _decodes_or_refuses(msgspec.msgpack.encode(value))


def test_job_graph_nested_too_deeply_is_refused(graph_bytes: bytes) -> None:
    """Regression: an operator config nested 50,000 lists deep raised RecursionError (a 500)."""
    graph = decode_job_graph(graph_bytes)
    op = graph.vertices[0].operators[0]
    marker = {"deep": 0}
    vertex = msgspec.structs.replace(
        graph.vertices[0],
        operators=[msgspec.structs.replace(op, config=marker), *graph.vertices[0].operators[1:]],
    )
    data = encode_job_graph(msgspec.structs.replace(graph, vertices=[vertex, *graph.vertices[1:]]))
    at = data.index(b"\xa4deep\x00") + len(b"\xa4deep")
    deep = data[:at] + _nested(50_000, b"\xc0", b"\x91") + data[at + 1 :]
    with pytest.raises(InvalidJobGraphError, match="nested too deeply"):
        decode_job_graph(deep)


@pytest.mark.parametrize(
    "header",
    [b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff", b"\xc6\xff\xff\xff\xff", b"\xdb\xff\xff\xff\xff"],
    ids=["array32", "map32", "bin32", "str32"],
)
def test_claimed_lengths_are_checked_against_the_input(header: bytes) -> None:
    """A 4-billion-element header on a few bytes of input is refused, not allocated."""
    base = msgspec.msgpack.encode({"job_id": "a" * 32, "job_name": "x", "vertices": [], "edges": []})
    at = base.index(b"\xa8vertices") + len(b"\xa8vertices")
    with pytest.raises(InvalidJobGraphError):
        decode_job_graph(base[:at] + header + base[at + 1 :])


class _Trap:
    """Unpickling this creates ``path``: a stand-in for code an attacker would run."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (Path.touch, (str(self.path),))  # type: ignore[return-value]


def test_decoding_a_graph_never_unpickles_its_user_code(tmp_path: Path, graph_bytes: bytes) -> None:
    """Every user-code blob of a graph replaced by a pickle that would create a file when loaded:
    decoding and validating the graph (all the JobManager does with it) leaves no such file."""
    marker = tmp_path / "unpickled"
    trap = pickle.dumps(_Trap(marker))
    assert not marker.exists()
    graph = decode_job_graph(graph_bytes)
    trapped = msgspec.structs.replace(graph, user_artifacts=dict.fromkeys(graph.user_artifacts, trap))
    decoded = decode_job_graph(encode_job_graph(trapped))
    decoded.validate()
    assert set(decoded.user_artifacts.values()) == {trap}
    assert not marker.exists(), "the decoder loaded a pickle"
    pickle.loads(trap)  # the trap works: loading it does create the file
    assert marker.exists()


# -- the savepoint metadata reader -------------------------------------------------------------


def _metadata() -> CheckpointMetadata:
    keyed = OperatorMetadata(
        operator_id="a" * 32,
        parallelism=2,
        max_parallelism=128,
        uid="counter",
        name="counter",
        keyed_state_kinds={"count": "value"},
        key_groups=[
            KeyGroupStateHandle(key_group=3, path=f"op-{'a' * 32}/kg-3.bin", size=10, entries={"count": 2})
        ],
    )
    source = OperatorMetadata(
        operator_id="b" * 32,
        parallelism=1,
        max_parallelism=128,
        operator_states=[
            OperatorStateHandle(
                subtask_index=0,
                path=f"op-{'b' * 32}/os-0.bin",
                size=5,
                states={"offsets": OperatorListStateInfo(mode="SPLIT_DISTRIBUTE", count=1)},
            )
        ],
    )
    return CheckpointMetadata(
        job_id="c" * 32,
        checkpoint_id=7,
        timestamp=1,
        is_savepoint=True,
        checkpoint_type="SAVEPOINT",
        operators=[keyed, source],
        savepoint_token="t" * 32,
    )


def _reads_or_refuses(data: bytes) -> CheckpointMetadata | None:
    try:
        metadata = decode_metadata(data, "_metadata")
    except SnapshotFormatError:
        return None
    # What restore planning and disposal then read must not fail with anything else either.
    try:
        checked_state_files(metadata, "_metadata")
    except SnapshotFormatError:
        pass
    _ = metadata.state_size, [op.state_sizes() for op in metadata.operators]
    return metadata


@BOUNDED
@given(data=st.binary(max_size=MAX_BYTES))
def test_metadata_reader_on_arbitrary_bytes(data: bytes) -> None:
    _reads_or_refuses(data)


@BOUNDED
@given(data=st.data())
def test_metadata_reader_on_mutated_metadata(data: st.DataObject) -> None:
    _reads_or_refuses(data.draw(_mutations(encode_metadata(_metadata()))))


def _metadata_shaped() -> st.SearchStrategy[Any]:
    valid = msgspec.to_builtins(_metadata())

    def replace(path: list[str | int], value: Any) -> Any:
        doc = msgspec.json.decode(msgspec.json.encode(valid))
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return doc

    spots: list[list[str | int]] = [
        ["format_version"],
        ["format"],
        ["checkpoint_id"],
        ["operators"],
        ["operators", 0, "key_groups"],
        ["operators", 0, "key_groups", 0, "path"],
        ["operators", 0, "key_groups", 0, "key_group"],
        ["operators", 0, "max_parallelism"],
        ["operators", 1, "operator_states", 0, "states"],
        ["operators", 1, "operator_states", 0, "path"],
        ["savepoint_token"],
    ]
    return st.tuples(st.sampled_from(spots), _VALUES).map(lambda pv: replace(*pv))


@SHAPED
@given(value=_metadata_shaped() | _VALUES)
def test_metadata_reader_on_metadata_shaped_values(value: Any) -> None:
    try:
        data = msgspec.json.encode(value)
    except (TypeError, OverflowError, ValueError):  # e.g. NaN is not JSON; bytes become base64
        return
    _reads_or_refuses(data)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"format": "flott-snapshot", "format_version": [1]}',  # an unhashable version: TypeError
        b'{"format": "flott-snapshot", "format_version": {"a": 1}}',
        b'{"format": "flott-snapshot", "format_version": true}',  # True == 1, not a version
        b'{"format": "flott-snapshot", "format_version": 1, "x": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b"[" * 100_000,  # RecursionError before the JSON was even complete
    ],
    ids=["list-version", "object-version", "bool-version", "deep-field", "deep-truncated"],
)
def test_metadata_reader_regressions(raw: bytes) -> None:
    """Each raised TypeError or RecursionError, which restore and disposal do not expect from a bad file."""
    with pytest.raises(SnapshotFormatError):
        decode_metadata(raw, "_metadata")


def test_metadata_round_trip() -> None:
    """The reader under the properties above does read what flott writes."""
    assert decode_metadata(encode_metadata(_metadata())) == _metadata()
