"""``flott savepoint inspect PATH``: what a savepoint or retained checkpoint holds, without a cluster.

Reads only the snapshot's ``_metadata`` (plain JSON; no user code, no state
file is unpickled) through the same fsspec storage the runtime writes with, so
``PATH`` may be a local directory, its ``_metadata`` file, or any fsspec URL
(``file://``, ``s3://`` with s3fs installed ...). Prints one row per operator
(uid, name, id, parallelism, max parallelism, key groups with state, keyed and
operator state sizes) and one row per state (kind, keys or list elements,
size), then the total. It also checks that every state file the metadata names
exists: a snapshot with missing files cannot be restored.

A state's size is exact when its files hold no other state (one keyed state per
operator, the common case); when states of an operator share key-group files,
the size shown is ``<= N``, the bytes of the files the state is in (the
metadata records sizes per file, not per state).
"""

from __future__ import annotations

from typing import Any

import click

from flott.cli.job_commands import _table, _time
from flott.errors import FlottError
from flott.runtime.checkpoint.metadata import load_metadata, snapshot_dir_of
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage, join


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}"
    return f"{n} B"  # pragma: no cover


def _state_rows(op: Any) -> list[list[str]]:
    """One row per state of one operator: name, kind, keys/elements, exact or upper-bound size."""
    label = op.uid or op.name or op.operator_id
    counts: dict[str, int] = {}
    sizes: dict[str, int] = {}
    shared: set[str] = set()
    for h in op.key_groups:
        for name, n in h.entries.items():
            counts[name] = counts.get(name, 0) + n
            sizes[name] = sizes.get(name, 0) + h.size
            if len(h.entries) > 1:
                shared.add(name)
    kinds: dict[str, str] = dict(op.keyed_state_kinds)
    op_counts: dict[str, int] = {}
    op_sizes: dict[str, int] = {}
    op_modes: dict[str, str] = {}
    op_shared: set[str] = set()
    for oh in op.operator_states:
        for name, info in oh.states.items():
            op_counts[name] = op_counts.get(name, 0) + info.count
            op_sizes[name] = op_sizes.get(name, 0) + oh.size
            op_modes[name] = info.mode
            if len(oh.states) > 1:
                op_shared.add(name)
    rows = []
    for name in sorted(set(counts) | set(kinds)):
        size = sizes.get(name, 0)
        rows.append(
            [
                label,
                name,
                f"keyed {kinds.get(name, '?')}",
                f"{counts.get(name, 0)} keys",
                ("<= " if name in shared else "") + human_size(size),
            ]
        )
    for name in sorted(op_counts):
        size = op_sizes[name]
        rows.append(
            [
                label,
                name,
                f"operator list ({op_modes[name]})",
                f"{op_counts[name]} elements",
                ("<= " if name in op_shared else "") + human_size(size),
            ]
        )
    return rows


def inspect_savepoint(path: str) -> int:
    storage = FsspecCheckpointStorage()
    try:
        meta = load_metadata(storage, path)
        directory = snapshot_dir_of(path)
        files = [h.path for op in meta.operators for h in op.key_groups]
        files += [h.path for op in meta.operators for h in op.operator_states]
        missing = [f for f in files if not storage.exists(join(directory, f))]
    except FlottError as e:
        raise click.ClickException(f"Cannot inspect {path}: {e}") from None
    except Exception as e:  # fsspec: unknown protocol, missing backend, permissions ...
        raise click.ClickException(f"Cannot inspect {path}: {type(e).__name__}: {e}") from None

    kind = "Savepoint" if meta.is_savepoint else "Checkpoint"
    click.echo(f"{kind} {directory}")
    click.echo(
        f"  job {meta.job_id}, checkpoint {meta.checkpoint_id} ({meta.checkpoint_type}, "
        f"{meta.savepoint_format}), taken {_time(meta.timestamp)}, {meta.format} v{meta.format_version}"
    )
    click.echo("")
    op_rows = []
    state_rows: list[list[str]] = []
    for op in meta.operators:
        keyed = sum(h.size for h in op.key_groups)
        operator = sum(h.size for h in op.operator_states)
        op_rows.append(
            [
                op.uid or "-",
                op.name or "-",
                op.operator_id,
                str(op.parallelism),
                str(op.max_parallelism),
                f"{len(op.key_groups)}/{op.max_parallelism}"
                if op.keyed_state_kinds or op.key_groups
                else "-",
                human_size(keyed),
                human_size(operator),
                human_size(keyed + operator),
            ]
        )
        state_rows.extend(_state_rows(op))
    if op_rows:
        header = [
            "Operator uid",
            "Name",
            "Operator ID",
            "Parallelism",
            "Max parallelism",
            "Key groups with state",
            "Keyed state",
            "Operator state",
            "Total",
        ]
        click.echo(_table(header, op_rows, right={3, 4, 5, 6, 7, 8}))
    else:
        click.echo("No operator state.")
    if state_rows:
        click.echo("")
        click.echo(_table(["Operator", "State", "Kind", "Entries", "Size"], state_rows, right={3, 4}))
    click.echo("")
    total = human_size(meta.state_size) + (f" ({meta.state_size} bytes)" if meta.state_size >= 1024 else "")
    click.echo(f"Total state size: {total} in {len(files)} file(s), {len(meta.operators)} operator(s)")
    if missing:
        raise click.ClickException(
            f"{len(missing)} of {len(files)} state file(s) named in the metadata are missing "
            f"(first: {join(directory, missing[0])}); this snapshot cannot be restored."
        )
    return 0
