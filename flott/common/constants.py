"""Module-level constants of ``pyflink.common.constants`` (Java's long range, the main output tag)."""

MAX_LONG_VALUE = 0x7FFFFFFFFFFFFFFF
"""The largest value of a Java long, 2^63 - 1."""

MIN_LONG_VALUE = -MAX_LONG_VALUE - 1
"""The smallest value of a Java long, -2^63."""

DEFAULT_OUTPUT_TAG = ""
"""The tag id of an operator's main output."""
