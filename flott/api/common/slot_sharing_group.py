"""SlotSharingGroup and MemorySize (PyFlink's ``pyflink.datastream.slot_sharing_group``).

Slot sharing groups are recorded on operators and respected by chaining (two
operators in different groups never share a task); fine-grained resource
profiles are kept as data so a later scheduler can honour them.
"""

from __future__ import annotations

from typing import Any


class MemorySize:
    """A number of bytes with the unit accessors PyFlink has."""

    def __init__(self, bytes_size: int | None = None) -> None:
        if bytes_size is None:
            raise ValueError("MemorySize needs bytes_size (or use MemorySize.of_mebi_bytes)")
        if bytes_size < 0:
            raise ValueError("memory size must be >= 0")
        self._bytes = int(bytes_size)

    @staticmethod
    def of_mebi_bytes(mebi_bytes: int) -> MemorySize:
        return MemorySize(mebi_bytes << 20)

    def get_bytes(self) -> int:
        return self._bytes

    def get_kibi_bytes(self) -> int:
        return self._bytes >> 10

    def get_mebi_bytes(self) -> int:
        return self._bytes >> 20

    def get_gibi_bytes(self) -> int:
        return self._bytes >> 30

    def get_tebi_bytes(self) -> int:
        return self._bytes >> 40

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemorySize) and other._bytes == self._bytes

    def __hash__(self) -> int:
        return hash(self._bytes)

    def __repr__(self) -> str:
        return f"MemorySize({self._bytes} bytes)"

    def __lt__(self, other: MemorySize) -> bool:
        if not isinstance(other, MemorySize):
            raise TypeError(f"Does not support comparison with non-MemorySize {other}")
        return self._bytes < other._bytes

    def __le__(self, other: MemorySize) -> bool:
        return self == other or self < other

    def __str__(self) -> str:
        """Flink's MemorySize text: the largest unit dividing the size exactly (bytes if even tb does)."""
        unit, name = 1, "bytes"
        for multiplier, unit_name in ((1 << 10, "kb"), (1 << 20, "mb"), (1 << 30, "gb"), (1 << 40, "tb")):
            if self._bytes % multiplier:
                break
            unit, name = multiplier, unit_name
        else:
            unit, name = 1, "bytes"  # a multiple of every unit: Flink falls back to bytes
        return f"{self._bytes // unit} {name}"


class SlotSharingGroup:
    """A named slot sharing group, optionally with a resource profile."""

    class Builder:
        def __init__(self, name: str) -> None:
            self._name = name
            self._cpu_cores: float | None = None
            self._task_heap_memory: MemorySize | None = None
            self._task_off_heap_memory: MemorySize | None = None
            self._managed_memory: MemorySize | None = None
            self._external_resources: dict[str, float] = {}

        def set_cpu_cores(self, cpu_cores: float) -> SlotSharingGroup.Builder:
            self._cpu_cores = cpu_cores
            return self

        def set_task_heap_memory(self, task_heap_memory: MemorySize) -> SlotSharingGroup.Builder:
            self._task_heap_memory = task_heap_memory
            return self

        def set_task_heap_memory_mb(self, task_heap_memory_mb: int) -> SlotSharingGroup.Builder:
            return self.set_task_heap_memory(MemorySize.of_mebi_bytes(task_heap_memory_mb))

        def set_task_off_heap_memory(self, task_off_heap_memory: MemorySize) -> SlotSharingGroup.Builder:
            self._task_off_heap_memory = task_off_heap_memory
            return self

        def set_task_off_heap_memory_mb(self, task_off_heap_memory_mb: int) -> SlotSharingGroup.Builder:
            return self.set_task_off_heap_memory(MemorySize.of_mebi_bytes(task_off_heap_memory_mb))

        def set_managed_memory(self, managed_memory: MemorySize) -> SlotSharingGroup.Builder:
            self._managed_memory = managed_memory
            return self

        def set_managed_memory_mb(self, managed_memory_mb: int) -> SlotSharingGroup.Builder:
            return self.set_managed_memory(MemorySize.of_mebi_bytes(managed_memory_mb))

        def set_external_resource(self, name: str, value: float) -> SlotSharingGroup.Builder:
            self._external_resources[name] = value
            return self

        def build(self) -> SlotSharingGroup:
            return SlotSharingGroup(
                self._name,
                cpu_cores=self._cpu_cores,
                task_heap_memory=self._task_heap_memory,
                task_off_heap_memory=self._task_off_heap_memory,
                managed_memory=self._managed_memory,
                external_resources=dict(self._external_resources),
            )

    def __init__(
        self,
        name: str,
        cpu_cores: float | None = None,
        task_heap_memory: MemorySize | None = None,
        task_off_heap_memory: MemorySize | None = None,
        managed_memory: MemorySize | None = None,
        external_resources: dict[str, float] | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("a slot sharing group needs a non-empty name")
        self._name = name
        self._cpu_cores = cpu_cores
        self._task_heap_memory = task_heap_memory
        self._task_off_heap_memory = task_off_heap_memory
        self._managed_memory = managed_memory
        self._external_resources = external_resources or {}

    @staticmethod
    def builder(name: str) -> SlotSharingGroup.Builder:
        return SlotSharingGroup.Builder(name)

    def get_name(self) -> str:
        return self._name

    def get_cpu_cores(self) -> float | None:
        return self._cpu_cores

    def get_task_heap_memory(self) -> MemorySize | None:
        return self._task_heap_memory

    def get_task_off_heap_memory(self) -> MemorySize | None:
        return self._task_off_heap_memory

    def get_managed_memory(self) -> MemorySize | None:
        return self._managed_memory

    def get_external_resources(self) -> dict[str, Any]:
        return dict(self._external_resources)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SlotSharingGroup) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash(self._name)

    def __repr__(self) -> str:
        return f"SlotSharingGroup({self._name!r})"
