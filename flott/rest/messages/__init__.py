"""Wire types of Flink's REST messages, as msgspec Structs carrying Flink's JSON field names.

Flink's names are inconsistent on purpose-of-history (kebab-case ``start-time``,
camelCase ``maxParallelism``, snake_case ``ship_strategy``); every field states
its wire name, so the Python attribute names can stay Pythonic. Request bodies
forbid unknown fields (Flink parses requests strictly); responses keep to the
field set of Flink's spec, because older Java clients parse responses strictly.
"""
