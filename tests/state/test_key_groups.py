"""Key-group assignment: stable across processes, consistent with Python equality, Flink's ranges."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal

import pytest

from flott.common.types import Row
from flott.runtime.state.key_groups import (
    KeyGroupRange,
    assign_key_to_parallel_operator,
    assign_to_key_group,
    compute_default_max_parallelism,
    compute_key_group_range_for_operator_index,
    compute_operator_index_for_key_group,
    stable_key_hash,
)

KEYS_EXPR = (
    "['', 'a', 'word', 'héllo wörld', '\\U0001F600', b'bytes', 0, 1, -1, 2**40, 2**70, -(2**70), 1.5, -0.25,"
    " None, True, ('a', 1), ('a', ('b', None)), frozenset({'x', 'y', 'z', 'w'}), Decimal('1.10')]"
)

SCRIPT = f"""
import json, sys
from decimal import Decimal
from flott.runtime.state.key_groups import stable_key_hash, assign_to_key_group
keys = {KEYS_EXPR}
json.dump([[stable_key_hash(k), assign_to_key_group(k, 128), hash('probe')] for k in keys], sys.stdout)
"""


def _run_with_seed(seed: str) -> list[list[int]]:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_two_processes_with_different_hash_seeds_agree() -> None:
    first = _run_with_seed("1")
    second = _run_with_seed("4242")
    assert first[0][2] != second[0][2]  # Python's own str hash really differs between them
    assert [r[:2] for r in first] == [r[:2] for r in second]
    # ... and so does this process.
    keys = eval(KEYS_EXPR, {"Decimal": Decimal})
    assert [[stable_key_hash(k), assign_to_key_group(k, 128)] for k in keys] == [r[:2] for r in first]


@pytest.mark.parametrize(("a", "b"), [(1, True), (1, 1.0), (0, -0.0), ("x", type("S", (str,), {})("x"))])
def test_equal_keys_hash_equal(a: object, b: object) -> None:
    assert a == b
    assert stable_key_hash(a) == stable_key_hash(b)


def test_named_rows_hash_like_their_equality() -> None:
    assert Row(a=1, b="x") == Row(b="x", a=1)
    assert stable_key_hash(Row(a=1, b="x")) == stable_key_hash(Row(b="x", a=1))
    assert stable_key_hash(Row(1, "x")) == stable_key_hash(Row(1, "x"))
    assert stable_key_hash(("a", "bc")) != stable_key_hash(("ab", "c"))


def test_key_groups_spread_evenly() -> None:
    counts = [0] * 128
    for i in range(128_000):
        counts[assign_to_key_group(f"key-{i}", 128)] += 1
    assert min(counts) > 800 and max(counts) < 1200


@pytest.mark.parametrize(("max_par", "par"), [(128, 1), (128, 3), (128, 128), (4096, 7), (10, 3)])
def test_ranges_partition_the_key_groups_and_invert_the_index(max_par: int, par: int) -> None:
    ranges = [compute_key_group_range_for_operator_index(max_par, par, i) for i in range(par)]
    assert sum(len(r) for r in ranges) == max_par
    assert ranges[0].start_key_group == 0 and ranges[-1].end_key_group == max_par - 1
    for index, key_group_range in enumerate(ranges):
        for key_group in key_group_range:
            assert compute_operator_index_for_key_group(max_par, par, key_group) == index
    assert KeyGroupRange.of_operator(max_par, par, 0) == ranges[0]


def test_operator_for_key_is_in_its_range() -> None:
    for i in range(1000):
        subtask = assign_key_to_parallel_operator(i, 128, 5)
        assert assign_to_key_group(i, 128) in compute_key_group_range_for_operator_index(128, 5, subtask)


def test_default_max_parallelism_is_flinks() -> None:
    assert compute_default_max_parallelism(1) == 128
    assert compute_default_max_parallelism(100) == 256
    assert compute_default_max_parallelism(30_000) == 32768
