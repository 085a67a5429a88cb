"""``TableEnvironment`` and ``StreamTableEnvironment``: catalog, SQL entry points, execution.

The catalog is the default in-memory one (``default_catalog.default_database``): temporary views
hold plan nodes, tables created by DDL or a TableDescriptor hold a connector table. Executing
builds a fresh StreamExecutionEnvironment (or uses the one a StreamTableEnvironment was made from),
translates the plan onto it and submits the job like any DataStream job.
"""

from __future__ import annotations

import warnings
from typing import Any

from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.errors import NotYetSupportedError
from flott.graph.job_graph_generator import MissingUidWarning
from flott.table.connectors import ConnectorTable, connector_table
from flott.table.environment_settings import EnvironmentSettings
from flott.table.plan import PlanNode, Scan, TranslationContext, Values
from flott.table.planner import validation_error
from flott.table.statement_set import StatementSet
from flott.table.table import Table
from flott.table.table_config import TableConfig
from flott.table.table_result import TableResult
from flott.table.types import DataType, RowType, infer_type

__all__ = ["StreamTableEnvironment", "TableEnvironment"]

_PREFIX = "default_catalog.default_database."


def _short(path: str) -> str:
    for prefix in (_PREFIX, "default_database."):
        if path.startswith(prefix):
            return path[len(prefix) :]
    if "." in path:
        raise NotYetSupportedError(
            f"table path '{path}': only the default catalog and database are supported"
        )
    return path


class TableEnvironment:
    def __init__(self, settings: EnvironmentSettings, stream_env: Any = None) -> None:
        self._settings = settings
        self._config = TableConfig(settings.get_configuration())
        self._stream_env = stream_env
        self._catalog: dict[str, PlanNode | ConnectorTable] = {}
        self._functions: dict[str, Any] = {}

    @staticmethod
    def create(environment_settings: Any = None) -> TableEnvironment:
        if environment_settings is None:
            environment_settings = EnvironmentSettings.in_streaming_mode()
        if not isinstance(environment_settings, EnvironmentSettings):
            environment_settings = (
                EnvironmentSettings.new_instance().with_configuration(environment_settings).build()
            )
        return TableEnvironment(environment_settings)

    def get_config(self) -> TableConfig:
        return self._config

    @property
    def _streaming(self) -> bool:
        mode = self._config.get("execution.runtime-mode")
        if mode is not None:
            return str(mode).lower() != "batch"
        return self._settings.is_streaming_mode()

    # --- tables -----------------------------------------------------------------------------------

    def from_elements(self, elements: Any, schema: Any = None, verify_schema: bool = True) -> Table:
        rows = [tuple(e) if not isinstance(e, tuple) else e for e in elements]
        if isinstance(schema, RowType):
            names, types = schema.field_names(), schema.field_types()
        elif isinstance(schema, DataType):
            names, types = ["f0"], [schema]
            rows = [(r,) for r in elements]
        else:
            first = rows[0] if rows else ()
            width = len(first)
            types = [infer_type(next((r[i] for r in rows if r[i] is not None), "")) for i in range(width)]
            names = list(schema) if schema is not None else [f"_{i + 1}" for i in range(width)]
            if len(names) != width:
                raise validation_error(f"from_elements: {len(names)} names for rows of {width} fields")
        if verify_schema:
            for r in rows:
                if len(r) != len(names):
                    raise validation_error(f"from_elements: the row {r!r} does not have {len(names)} fields")
        return Table(Values([tuple(r) for r in rows], list(names), list(types)), self)

    def from_pandas(self, pdf: Any, schema: Any = None, splits_num: int = 1) -> Table:
        """A table of a pandas DataFrame's rows; ``schema`` is a RowType, column names or DataTypes
        (the rest inferred from the dtypes as PyFlink's pyarrow step infers them)."""
        from flott.table.pandas_conversion import frame_to_plan

        return Table(frame_to_plan(self, pdf, schema, splits_num), self)

    def from_path(self, path: str) -> Table:
        return Table(self._scan(path), self)

    def _scan(self, path: str, position: str = "") -> PlanNode:
        name = _short(path)
        entry = self._catalog.get(name)
        if entry is None:
            raise validation_error(
                f"{position}Object '{name}' not found" if position else f"Table `{path}` was not found."
            )
        if isinstance(entry, ConnectorTable):
            if entry.computed is None and entry.watermark is None:
                return Scan(entry)
            from flott.table.sql import SqlPlanner

            node: PlanNode = Scan(entry)
            if entry.computed is not None:
                text, declared = entry.computed
                node = SqlPlanner(self, text).computed_columns(node, declared)
                node.computed_sql = {  # type: ignore[attr-defined]  # what get_schema prints
                    n: e.sql(dialect="spark", identify=True) for n, e in declared if e is not None
                }
            if entry.watermark is not None:
                node = SqlPlanner(self, "").watermark_assigner(node, entry.watermark)
            return node
        return entry

    def create_temporary_view(self, view_path: str, table_or_data_stream: Any, *fields: Any) -> None:
        name = _short(view_path)
        if name in self._catalog:
            raise validation_error(
                f"Temporary table '`default_catalog`.`default_database`.`{name}`' already exists"
            )
        if not isinstance(table_or_data_stream, Table):
            table_or_data_stream = self.from_data_stream(table_or_data_stream, *fields)  # type: ignore[attr-defined]
        self._catalog[name] = table_or_data_stream._node

    def register_table(self, name: str, table: Table) -> None:
        self.create_temporary_view(name, table)

    def create_temporary_table(self, path: str, descriptor: Any) -> None:
        table = connector_table(
            _short(path),
            descriptor.schema.names,
            descriptor.schema.types,
            descriptor.options(),
            getattr(descriptor, "partition_keys", None),
            descriptor.schema.primary_key,
            descriptor.schema.metadata,
        )
        declared = getattr(descriptor.schema, "declared", [])
        if any(e is not None for _, e in declared):
            from flott.table.sql import SqlPlanner
            from flott.table.sql_windows import parse_expression

            parsed = [(n, None if e is None else parse_expression(e)) for n, e in declared]
            text = ", ".join(e for _, e in declared if e is not None)
            table.computed = (text, parsed)
            SqlPlanner(self, text).computed_columns(Scan(table), parsed)  # mistakes fail here, as in Flink
        self._catalog[_short(path)] = table

    def create_table(self, path: str, descriptor: Any) -> None:
        self.create_temporary_table(path, descriptor)

    def list_tables(self) -> list[str]:
        return sorted(self._catalog)

    def list_temporary_tables(self) -> list[str]:
        return sorted(self._catalog)

    def list_views(self) -> list[str]:
        return sorted(n for n, e in self._catalog.items() if not isinstance(e, ConnectorTable))

    def list_temporary_views(self) -> list[str]:
        return self.list_views()

    def list_catalogs(self) -> list[str]:
        return ["default_catalog"]

    def list_databases(self) -> list[str]:
        return ["default_database"]

    def get_current_catalog(self) -> str:
        return "default_catalog"

    def get_current_database(self) -> str:
        return "default_database"

    def drop_temporary_view(self, view_path: str) -> bool:
        return self._catalog.pop(_short(view_path), None) is not None

    def drop_temporary_table(self, table_path: str) -> bool:
        return self._catalog.pop(_short(table_path), None) is not None

    def list_user_defined_functions(self) -> list[str]:
        return sorted(self._functions)

    def list_functions(self) -> list[str]:
        return sorted(self._functions)

    def create_temporary_function(self, path: str, function: Any) -> None:
        self._functions[_short(path).lower()] = _wrap_function(function)

    def create_temporary_system_function(self, name: str, function: Any) -> None:
        self._functions[name.lower()] = _wrap_function(function)

    def create_function(
        self, path: str, function_class_name: Any, ignore_if_exists: bool | None = None
    ) -> None:
        raise NotYetSupportedError(
            "create_function with a class name (catalog functions) is not yet supported"
        )

    def drop_temporary_function(self, path: str) -> bool:
        return self._functions.pop(_short(path).lower(), None) is not None

    def drop_temporary_system_function(self, name: str) -> bool:
        return self._functions.pop(name.lower(), None) is not None

    # --- SQL --------------------------------------------------------------------------------------

    def sql_query(self, query: str) -> Table:
        from flott.table.sql import SqlPlanner

        return Table(SqlPlanner(self, query).query(), self)

    def execute_sql(self, stmt: str) -> TableResult:
        from flott.table.sql import SqlPlanner

        return SqlPlanner(self, stmt).execute()

    def explain_sql(self, stmt: str, *extra_details: Any) -> str:
        from flott.table.plan import explain_plan
        from flott.table.sql import SqlPlanner

        if extra_details:
            raise NotYetSupportedError("explain_sql with ExplainDetails is not yet supported by flott")
        return explain_plan(SqlPlanner(self, stmt).query())

    def create_statement_set(self) -> StatementSet:
        return StatementSet(self)

    # --- execution --------------------------------------------------------------------------------

    def _new_stream_env(self) -> Any:
        conf = {k: v for k, v in self._config.get_configuration().items() if not k.startswith("table.")}
        if self._stream_env is not None:
            env = self._stream_env
            if conf:
                env.configure(conf)
        else:
            env = StreamExecutionEnvironment.get_execution_environment(conf or None)
        env.set_runtime_mode(
            RuntimeExecutionMode.STREAMING if self._streaming else RuntimeExecutionMode.BATCH
        )
        return env

    def _context(self) -> TranslationContext:
        env = self._new_stream_env()
        ttl = self._config.state_ttl_ms() if self._streaming else 0
        return TranslationContext(env, self._streaming, env.get_parallelism(), state_ttl_ms=ttl)

    def _execute_collect(self, node: PlanNode) -> TableResult:
        ctx = self._context()
        ds = node.translate(ctx)
        with warnings.catch_warnings():  # the plan's operators have uids; the collect sink is the runtime's
            warnings.simplefilter("ignore", MissingUidWarning)
            records = ds.execute_and_collect("collect")
        return TableResult(node.names, node.types, streaming=self._streaming, records=lambda: records)

    def _execute_inserts(self, inserts: list[tuple[Any, Table]]) -> TableResult:
        ctx = self._context()
        sink_names = []
        for target, table in inserts:
            sink = self._sink_table(target)
            sink.check_insert(table._node)
            ds = self._enforce_not_null(sink, table._node, table._node.translate(ctx))
            sink.connector.sink_stream(ctx, sink, ds, table._node.is_updating(ctx.streaming))
            sink_names.append(_PREFIX + sink.name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingUidWarning)
            client = ctx.env.execute_async("insert-into_" + ",".join(sink_names))
        return TableResult.of_insert(sink_names, client)

    def _enforce_not_null(self, sink: ConnectorTable, node: PlanNode, ds: Any) -> Any:
        """The sink's NOT NULL columns the query may leave NULL are checked row by row, as Flink's
        planner puts a ConstraintEnforcer before the sink (chained, at the input's parallelism)."""
        from flott.table.runtime import NotNullEnforcer

        columns = [
            (i, name)
            for i, (name, st, qt) in enumerate(zip(sink.names, sink.types, node.types, strict=True))
            if not st.is_nullable and qt.is_nullable
        ]
        if not columns:
            return ds
        drop = self._config.not_null_enforcer() == "DROP"
        enforcer = ds.flat_map(NotNullEnforcer(columns, drop)).name("ConstraintEnforcer")
        return enforcer.set_parallelism(ds.transformation.parallelism)

    def _sink_table(self, target: Any) -> ConnectorTable:
        if isinstance(target, str):
            entry = self._catalog.get(_short(target))
            if entry is None:
                raise validation_error(f"Table `{target}` was not found.")
            if not isinstance(entry, ConnectorTable):
                raise validation_error(
                    f"Table '{_PREFIX}{_short(target)}' is a view and cannot be written to"
                )
            return entry
        schema = target.schema
        return connector_table(
            "*anonymous*",
            schema.names,
            schema.types,
            target.options(),
            None,
            schema.primary_key,
            schema.metadata,
        )


def _wrap_function(function: Any) -> Any:
    from flott.table.udf import UserDefinedFunctionWrapper, udf

    if isinstance(function, UserDefinedFunctionWrapper):
        return function
    raise NotYetSupportedError(
        f"create_temporary_function needs a function made with @udf/udaf (got {type(function).__name__}); "
        f"{udf.__name__} wraps a ScalarFunction"
    )


class StreamTableEnvironment(TableEnvironment):
    @staticmethod
    def create(  # type: ignore[override]  # PyFlink's signature: the DataStream environment first
        stream_execution_environment: Any = None, environment_settings: Any = None
    ) -> StreamTableEnvironment:
        env = stream_execution_environment or StreamExecutionEnvironment.get_execution_environment()
        if environment_settings is None:
            environment_settings = EnvironmentSettings(env.get_runtime_mode() != RuntimeExecutionMode.BATCH)
        return StreamTableEnvironment(environment_settings, env)

    def from_data_stream(self, data_stream: Any, *fields_or_schema: Any) -> Table:
        from flott.table.datastream_conversion import from_data_stream

        return from_data_stream(self, data_stream, fields_or_schema)  # type: ignore[no-any-return]

    def to_data_stream(self, table: Table) -> Any:
        from flott.table.datastream_conversion import to_data_stream

        return to_data_stream(self, table)

    def to_changelog_stream(self, table: Table, target_schema: Any = None, changelog_mode: Any = None) -> Any:
        from flott.table.datastream_conversion import to_changelog_stream

        return to_changelog_stream(self, table, target_schema, changelog_mode)
