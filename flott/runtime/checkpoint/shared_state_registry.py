"""Which shared files (incremental checkpoints' table files) the retained checkpoints refer to
(Flink's SharedStateRegistry), as a pure bookkeeping object owned by the CheckpointCoordinator.

A completed checkpoint that is retained *registers* every shared file it refers to (one
reference per checkpoint); when it is subsumed or no longer retained it *unregisters* them, and
the files no retained checkpoint refers to any more come back to be deleted. A file is never
deleted while a retained checkpoint could be restored from it. The registry is rebuilt from the
retained checkpoints' metadata (a JobManager that takes over registers the checkpoint it
restores), so it needs no storage of its own.

Files uploaded by a checkpoint that then failed are no retained checkpoint's: the coordinator
deletes those that are not registered (:meth:`unreferenced`).
"""

from __future__ import annotations

from collections.abc import Iterable


class SharedStateRegistry:
    def __init__(self) -> None:
        self._references: dict[str, set[int]] = {}

    def register(self, checkpoint_id: int, paths: Iterable[str]) -> None:
        """Checkpoint ``checkpoint_id`` is retained and refers to ``paths`` (idempotent)."""
        for path in paths:
            self._references.setdefault(path, set()).add(checkpoint_id)

    def unregister(self, checkpoint_id: int, paths: Iterable[str]) -> list[str]:
        """Checkpoint ``checkpoint_id`` is no longer retained: the paths nobody refers to now,
        to delete (each once, in the order given)."""
        out: list[str] = []
        for path in paths:
            refs = self._references.get(path)
            if refs is None:
                continue
            refs.discard(checkpoint_id)
            if not refs:
                del self._references[path]
                out.append(path)
        return out

    def is_registered(self, path: str) -> bool:
        return path in self._references

    def unreferenced(self, paths: Iterable[str]) -> list[str]:
        """Of ``paths``, those no retained checkpoint refers to (a failed checkpoint's uploads)."""
        return [p for p in dict.fromkeys(paths) if p not in self._references]

    def references(self, path: str) -> frozenset[int]:
        return frozenset(self._references.get(path, ()))

    def __len__(self) -> int:
        return len(self._references)
