"""OutputTag (PyFlink's ``pyflink.datastream.output_tag``).

Defined in ``flott.api.common.output_tag``; handed out here under PyFlink's import path.
"""

from __future__ import annotations

from flott.api.common.output_tag import (
    OutputTag,
)

__all__ = [
    "OutputTag",
]
