"""PyFlink's Table API and SQL, planned onto flott's DataStream runtime.

Design. Both front ends build one small logical plan (:mod:`flott.table.plan`): the Table API
(:mod:`flott.table.table`) from its expression DSL (:mod:`flott.table.expression`), SQL
(:mod:`flott.table.sql`) from the AST of ``sqlglot``. Expressions are resolved and typed once
(:mod:`flott.table.planner`: Flink's result types, so printed widths and values match) and compiled
to Python source per calc. Translation turns each node into DataStream operators on a
StreamExecutionEnvironment: values/connector scans become sources, a calc one flat_map (projection
and filter fused), a group aggregate ``key_by`` + a keyed process function whose accumulators live
in keyed state (:mod:`flott.table.runtime`), emitting Flink's changelog (+I, then -U old / +U new)
in streaming mode and each group's final row at end of input in batch mode. So a Table/SQL job is a
DataStream job: keyed state, checkpoints, savepoints, REST and the dashboard come with it.

Records between table operators are ``(kind, values)`` pairs (RowKind value, tuple); users see
``Row`` objects with their RowKind (``collect()``) or Flink's text (``print()``'s tableau,
the ``print`` connector's ``+I[a, 1]``).

Why sqlglot: it is pure Python (nothing to build, runs wherever flott runs), actively maintained,
and parses ANSI SQL with the constructs Flink's dialect shares into a typed AST with positions, which
this package plans itself; where Flink's dialect differs (``STRING`` types, ``WITH`` options, window
table-valued functions) the gaps are covered here. Calcite's validator is not reproduced: the
checks flott makes carry Flink's messages (``SQL validation failed. At line 1, column 8: Column 'x'
not found in any table``), and what flott does not plan is refused with NotYetSupportedError naming
the construct, never answered wrongly.
"""

from flott.common.types import Row, RowKind
from flott.table.environment_settings import EnvironmentSettings
from flott.table.expression import Expression
from flott.table.over_window import OverWindowedTable
from flott.table.schema import Schema, TableSchema
from flott.table.statement_set import StatementSet
from flott.table.table import GroupedTable, Table
from flott.table.table_config import TableConfig
from flott.table.table_descriptor import FormatDescriptor, TableDescriptor
from flott.table.table_environment import StreamTableEnvironment, TableEnvironment
from flott.table.table_result import ResultKind, TableResult
from flott.table.types import DataTypes
from flott.table.udf import (
    AggregateFunction,
    FunctionContext,
    ScalarFunction,
    TableAggregateFunction,
    TableFunction,
)

__all__ = [
    "AggregateFunction",
    "DataTypes",
    "EnvironmentSettings",
    "Expression",
    "FormatDescriptor",
    "FunctionContext",
    "GroupedTable",
    "OverWindowedTable",
    "ResultKind",
    "Row",
    "RowKind",
    "ScalarFunction",
    "Schema",
    "StatementSet",
    "Table",
    "TableAggregateFunction",
    "TableConfig",
    "TableDescriptor",
    "TableEnvironment",
    "TableFunction",
    "TableResult",
    "TableSchema",
    "StreamTableEnvironment",
]
