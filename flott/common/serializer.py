"""``TypeSerializer``: the user-facing base class for custom (state) serializers.

PyFlink lets users plug serializers for state and records; flott keeps the same
two-method shape (``serialize`` into / ``deserialize`` from a binary stream) so
such code carries over unchanged.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from io import BytesIO
from typing import Generic, TypeVar

__all__ = ["TypeSerializer"]

T = TypeVar("T")


class TypeSerializer(ABC, Generic[T]):
    """Writes values of one type to a byte stream and reads them back."""

    @abstractmethod
    def serialize(self, element: T, stream: BytesIO) -> None: ...

    @abstractmethod
    def deserialize(self, stream: BytesIO) -> T: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)
