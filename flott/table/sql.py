"""SQL: sqlglot's AST planned onto flott.table's logical plan, with Flink's error messages.

sqlglot parses (its Spark dialect is the closest to Flink's: backquoted identifiers, ``STRING``,
``WITH ('k' = 'v')`` table options); this module resolves names against the catalog, types
expressions through flott.table.planner and builds the same plan nodes the Table API builds.
Validation errors carry Calcite's positions (``At line 1, column 8`` for one character,
``From line 1, column 15 to line 1, column 18`` for longer spans); parse errors name where the
parser stopped. Statements and clauses not planned here raise NotYetSupportedError naming them.
Flink syntax sqlglot does not read as Flink means it (``WATERMARK FOR``, window TVFs, functions its
Spark dialect rewrites) is taken out of the text first, positions kept (flott.table.sql_windows).
"""

from __future__ import annotations

import decimal
import itertools
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from flott.errors import NotYetSupportedError, SqlParseError
from flott.runtime.operators.timestamps_watermarks import auto_watermark_interval_ms
from flott.table.lateral import rename_lateral_calls, sql_lateral
from flott.table.plan import (
    Calc,
    PlanNode,
    Scan,
    Union,
    aggregate_plan,
    collect_aggregates,
    rewrite_over_aggregate,
)
from flott.table.planner import (
    Rex,
    common_type,
    field_access,
    field_index,
    literal_type,
    make_call,
    table_error,
    validation_error,
)
from flott.table.sql_over import RANK_FUNCTIONS, OverPlanning
from flott.table.sql_scope import Scope
from flott.table.sql_types import from_sqlglot, parse_type
from flott.table.sql_windows import RENAMED_BY_ALIAS, Rewritten, WatermarkClause, WindowTvfCall, rewrite
from flott.table.table_result import TableResult
from flott.table.time_functions import EXTRACT_UNITS, FLOOR_UNITS, check_unit
from flott.table.types import DataTypes, RowType
from flott.table.window_aggregate import (
    WatermarkAssigner,
    WindowAggregate,
    WindowSpec,
    WindowTableFunction,
    input_refs,
)

if TYPE_CHECKING:
    from flott.table.table import Table
    from flott.table.table_environment import TableEnvironment

_BINARY = {
    exp.Add: "plus",
    exp.Sub: "minus",
    exp.Mul: "times",
    exp.Div: "divide",
    exp.Mod: "mod",
    exp.EQ: "equals",
    exp.NEQ: "notEquals",
    exp.GT: "greaterThan",
    exp.GTE: "greaterThanOrEqual",
    exp.LT: "lessThan",
    exp.LTE: "lessThanOrEqual",
    exp.And: "and",
    exp.Or: "or",
    exp.Like: "like",
    exp.DPipe: "concat",
    exp.Pow: "power",
}
_UNARY = {
    exp.Upper: "upper",
    exp.Lower: "lower",
    exp.Length: "charLength",
    exp.Abs: "abs",
    exp.Not: "not",
    exp.Neg: "minusPrefix",
    exp.Sqrt: "sqrt",
    exp.Exp: "exp",
    exp.Ln: "ln",
    exp.Initcap: "initCap",
    exp.Sign: "sign",
}
_DATE_PARTS = {  # sqlglot's nodes for Flink's EXTRACT shorthands
    exp.Year: "YEAR",
    exp.Quarter: "QUARTER",
    exp.Month: "MONTH",
    exp.Week: "WEEK",
    exp.DayOfMonth: "DAY",
    exp.DayOfYear: "DOY",
    exp.DayOfWeek: "DOW",
    exp.Hour: "HOUR",
    exp.Minute: "MINUTE",
    exp.Second: "SECOND",
}
_FLINK_FUNCTIONS_NOT_YET = frozenset(  # Flink's: refused by name, not "no match found" (Flink has them)
    {"PROCTIME", "CURRENT_WATERMARK", "CURRENT_ROW_TIMESTAMP", "TO_TIMESTAMP_TZ", "CONVERT_TZ"}
    | {f"{w}{part}" for w in ("TUMBLE", "HOP", "SESSION") for part in ("", "_START", "_END", "_ROWTIME",
                                                                      "_PROCTIME")}
)
_DIFF_UNITS = ("SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR")
_AGGREGATES = {exp.Count: "count", exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "avg"}
_NAMED = {  # functions sqlglot leaves anonymous, by their SQL name
    "CHAR_LENGTH": "charLength",
    "CARDINALITY": "cardinality",
    "CHARACTER_LENGTH": "charLength",
    "MOD": "mod",
    "CONCAT_WS": "concat_ws",
    "LTRIM": "ltrim",
    "RTRIM": "rtrim",
    "REPLACE": "replace",
    "REVERSE": "reverse",
    "REPEAT": "repeat",
    "LPAD": "lpad",
    "RPAD": "rpad",
    "POSITION": "position",
    "LOG10": "log10",
    "LOG2": "log2",
    "INITCAP": "initCap",
    "POWER": "power",
    "UPPER": "upper",
    "LOWER": "lower",
    "ABS": "abs",
    "TO_TIMESTAMP_LTZ": "toTimestampLtz",
}

def _uniquify(names: list[str]) -> list[str]:
    """Calcite's rule for a SELECT list's names: a repeated name gets the first free suffix 0, 1, ...
    (``SELECT l.v, r.v`` gives ``v, v0``), so a join's same-named columns can be selected."""
    used: set[str] = set()
    out = []
    for name in names:
        unique, attempt = name, 0
        while unique in used:
            unique, attempt = f"{name}{attempt}", attempt + 1
        used.add(unique)
        out.append(unique)
    return out





_FLINK_ONLY = [  # checked on the text after flott.table.sql_windows cut out what it plans
    (r"\bWATERMARK FOR\b", "WATERMARK FOR outside CREATE TABLE"),
    (r"\bDESCRIPTOR ?\(", "DESCRIPTOR outside a window table-valued function"),
    (r"\bFOR SYSTEM_TIME AS OF\b", "FOR SYSTEM_TIME AS OF (temporal joins)"),
    (r"\bMATCH_RECOGNIZE\b", "MATCH_RECOGNIZE"),
    (r"\bPRIMARY KEY\b", "PRIMARY KEY constraints"),
    (r"\bMETADATA\b", "METADATA columns"),
]


_CLAUSE_KEYWORDS = frozenset({"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "UNION", "LIMIT"})


def _filter_below_window_tvf(node: PlanNode) -> PlanNode:
    """``FROM TABLE(TUMBLE(...)) WHERE <condition on the input's columns>``: the filter runs before the
    windowing (a row's windows do not depend on it), so the window aggregation still sees its TVF."""
    if not (isinstance(node, Calc) and isinstance(node.input, WindowTableFunction)):
        return node
    tvf = node.input
    width = len(tvf.input.names)
    identity = all(p.kind == "input" and p.index == i for i, p in enumerate(node.projections))
    if not identity or len(node.projections) != len(tvf.names) or node.condition is None:
        return node
    if any(i >= width for i in input_refs(node.condition)):
        return node
    inner = tvf.input
    identity_rexes = [Rex("input", t, index=i) for i, t in enumerate(inner.types)]
    filtered = Calc(inner, identity_rexes, list(inner.names), node.condition)
    return WindowTableFunction(filtered, tvf.time_index, tvf.spec)


def _calcite_type(t: Any) -> str:
    """A type as Calcite names it in validation messages (STRING is VARCHAR(2147483647))."""
    if t.type_root == "VARCHAR":
        return f"VARCHAR({t.length})"
    return str(t.nullable())


class SqlPlanner(OverPlanning):
    def __init__(self, t_env: TableEnvironment, text: str) -> None:
        self.t_env = t_env
        self.text = text
        self.rewritten = Rewritten(text)
        self._rank_ranges: dict[int, tuple[str, int, int, bool]] = {}
        self.lateral_names: dict[str, str] = {}
        """Placeholder → table function name of each LATERAL TABLE call (flott.table.lateral)."""

    # --- positions and errors -----------------------------------------------------------------

    def _position(self, offset: int) -> tuple[int, int]:
        before = self.text[:offset]
        line = before.count("\n") + 1
        return line, offset - (before.rfind("\n") + 1) + 1

    def _span(self, node: Any) -> str:
        """Calcite's ``At line l, column c: `` or ``From .. to ..: `` of a node (or of a
        ``(first, last)`` pair of nodes: a compound identifier's parts)."""
        if isinstance(node, tuple):
            first, last = (n.meta if hasattr(n, "meta") else {} for n in node)
            meta = {"start": first["start"], "end": last["end"]} if "start" in first and "end" in last else {}
        else:
            meta = node.meta if hasattr(node, "meta") else {}
        if isinstance(node, exp.Column | exp.Table):
            meta = node.this.meta
        if "start" not in meta:
            return ""
        l1, c1 = self._position(meta["start"])
        l2, c2 = self._position(meta["end"])
        if (l1, c1) == (l2, c2):
            return f"At line {l1}, column {c1}: "
        return f"From line {l1}, column {c1} to line {l2}, column {c2}: "

    def _invalid(self, node: Any, message: str) -> Exception:
        return validation_error(f"SQL validation failed. {self._span(node)}{message}")

    def _refuse_flink_only(self) -> None:
        """Flink-dialect constructs sqlglot does not parse: refused by name, not as a parse error."""
        import re

        upper = re.sub(r"\s+", " ", self.rewritten.text.upper())
        for pattern, construct in _FLINK_ONLY:
            if re.search(pattern, upper):
                raise NotYetSupportedError(f"{construct} is not yet supported by flott's SQL")

    def _keyword_after_comma(self) -> None:
        """Calcite's message for a clause keyword where a list item is expected (``a, FROM t``)."""
        try:
            tokens = sqlglot.Dialect.get_or_raise("spark").tokenize(self.text)
        except sqlglot.errors.TokenError:
            return
        for prev, tok in itertools.pairwise(tokens):
            if prev.token_type.name == "COMMA" and tok.text.upper() in _CLAUSE_KEYWORDS:
                line, column = self._position(tok.start)
                raise SqlParseError(
                    "org.apache.flink.table.api.SqlParserException: SQL parse failed. Incorrect syntax near "
                    f"the keyword '{tok.text.upper()}' at line {line}, column {column}."
                )

    def _parse(self) -> Any:
        self.rewritten = rewrite(self.text)
        self._refuse_flink_only()
        self.rewritten.text, self.lateral_names = rename_lateral_calls(self.rewritten.text)
        self._keyword_after_comma()
        try:
            statements = [s for s in sqlglot.parse(self.rewritten.text, read="spark") if s is not None]
        except sqlglot.errors.ParseError as e:
            err = e.errors[0] if e.errors else {}
            token = err.get("highlight") or "<EOF>"
            where = f" at line {err.get('line', 1)}, column {err.get('col', 1)}"
            if not err.get("end_context") and "missing" in str(err.get("description", "")):
                raise SqlParseError(
                    f'org.apache.flink.table.api.SqlParserEOFException: Encountered "<EOF>"{where}.'
                ) from None
            raise SqlParseError(
                "org.apache.flink.table.api.SqlParserException: SQL parse failed. "
                f'Encountered "{token}"{where}.'
            ) from None
        except sqlglot.errors.TokenError as e:
            raise SqlParseError(
                f"org.apache.flink.table.api.SqlParserException: SQL parse failed. {e}"
            ) from None
        if len(statements) != 1:
            raise SqlParseError(
                "org.apache.flink.table.api.SqlParserException: only one statement can be executed at a time"
            )
        return statements[0]

    # --- statements -----------------------------------------------------------------------------

    def query(self) -> PlanNode:
        tree = self._parse()
        if not isinstance(tree, exp.Query):
            raise SqlParseError(
                "org.apache.flink.table.api.SqlParserException: SQL parse failed. "
                "Non-query expression encountered in illegal context"
            )
        return self._query(tree)

    def insert(self) -> tuple[str, Table]:
        from flott.table.table import Table

        tree = self._parse()
        if not isinstance(tree, exp.Insert):
            raise NotYetSupportedError("add_insert_sql() takes an INSERT INTO statement")
        return self._insert(tree, Table)

    def _insert(self, tree: Any, table_cls: Any) -> tuple[str, Table]:
        if tree.args.get("overwrite"):
            raise NotYetSupportedError("INSERT OVERWRITE is not yet supported")
        target = tree.this
        columns = None
        if isinstance(target, exp.Schema):
            target, columns = target.this, list(target.expressions)
        name = target.name
        if name not in self.t_env._catalog:
            raise self._invalid(target, f"Object '{name}' not found")
        node = self._query(tree.expression)
        if columns is not None:
            node = self._to_target_columns(node, name, columns)
        return name, table_cls(node, self.t_env)

    def _query_span(self) -> str:
        """Calcite's span of an INSERT's query: from its first keyword to the statement's end."""
        import re

        text = self.rewritten.text.rstrip().rstrip(";").rstrip()
        found = re.search(r"\)\s*\b(VALUES|SELECT|WITH)\b", text, re.IGNORECASE)
        if found is None:
            return ""
        l1, c1 = self._position(found.start(1))
        l2, c2 = self._position(len(text) - 1)
        return f"From line {l1}, column {c1} to line {l2}, column {c2}: "

    def _to_target_columns(self, node: PlanNode, name: str, columns: list[Any]) -> PlanNode:
        """``INSERT INTO t (b, a) ...``: the query's columns moved to the table's order, the table's
        other columns NULL (refused where NOT NULL), with Calcite's messages."""
        from flott.table.plan import Calc

        table = self.t_env._catalog[name]
        sink_names, sink_types = list(table.names), list(table.types)
        given: dict[str, int] = {}
        for i, column in enumerate(columns):
            if column.name not in sink_names:
                raise self._invalid(column, f"Unknown target column '{column.name}'")
            if column.name in given:
                raise self._invalid(column, f"Target column '{column.name}' is assigned more than once")
            given[column.name] = i
        if len(columns) != len(node.names):
            raise validation_error(
                f"SQL validation failed. {self._query_span()}Number of columns must match number of "
                "query columns"
            )
        projections = []
        for column, t in zip(sink_names, sink_types, strict=True):
            if column in given:
                projections.append(Rex("input", node.types[given[column]], index=given[column]))
            elif not t.is_nullable:
                raise validation_error(
                    f"SQL validation failed. At line 0, column 0: Column '{column}' has no default "
                    "value and does not allow NULLs"
                )
            else:
                projections.append(Rex("lit", t, value=None))
        return Calc(node, projections, sink_names)

    def execute(self) -> TableResult:
        import re

        from flott.table.table import Table

        explain = re.match(r"\s*EXPLAIN\s+(?:PLAN\s+FOR\s+)?", self.text, re.IGNORECASE)
        if explain is not None:
            details = r"(?:ESTIMATED_COST|CHANGELOG_MODE|JSON_EXECUTION_PLAN|PLAN_ADVICE)\b"
            if re.match(details, self.text[explain.end() :], re.IGNORECASE):
                raise NotYetSupportedError("EXPLAIN with explain details is not yet supported by flott")
            plan = SqlPlanner(self.t_env, self.text[explain.end():]).query()
            from flott.table.plan import explain_plan
            from flott.table.types import VarCharType

            string = VarCharType(VarCharType.MAX_LENGTH)
            return TableResult(["result"], [string], rows=[(explain_plan(plan),)])
        tree = self._parse()
        if isinstance(tree, exp.Query):
            return self.t_env._execute_collect(self._query(tree))
        if isinstance(tree, exp.Insert):
            return self.t_env._execute_inserts([self._insert(tree, Table)])
        if isinstance(tree, exp.Create):
            return self._create(tree)
        if isinstance(tree, exp.Drop):
            name = tree.this.name
            if name not in self.t_env._catalog:
                if tree.args.get("exists"):
                    return TableResult.ok()
                raise validation_error(
                    f"Temporary table with identifier '`default_catalog`.`default_database`."
                    f"`{name}`' does not exist."
                )
            del self.t_env._catalog[name]
            return TableResult.ok()
        if isinstance(tree, exp.Show) and tree.name.upper() == "TABLES":
            from flott.table.types import DataTypes

            return TableResult(
                ["table name"], [DataTypes.STRING()], rows=[(n,) for n in self.t_env.list_tables()]
            )
        raise NotYetSupportedError(
            f"the SQL statement '{self.text.strip().split()[0].upper()}' "
            f"({type(tree).__name__}) is not yet supported by flott"
        )

    def _create(self, tree: Any) -> TableResult:
        from flott.table.connectors import connector_table

        kind = str(tree.args.get("kind", "")).upper()
        if kind == "VIEW":
            name = tree.this.name
            self.t_env._catalog[name] = self._query(tree.expression)
            return TableResult.ok()
        if kind != "TABLE":
            raise NotYetSupportedError(f"CREATE {kind} is not yet supported by flott")
        schema = tree.this
        name = schema.this.name
        if tree.expression is not None:
            raise NotYetSupportedError("CREATE TABLE ... AS SELECT is not yet supported")
        names, types = [], []
        declared: list[tuple[str, Any]] = []  # (name, computed expression or None), in declared order
        for col in schema.expressions:
            if not isinstance(col, exp.ColumnDef):
                raise NotYetSupportedError(
                    f"CREATE TABLE: '{col.sql('spark')}' (watermarks, primary keys, "
                    "computed columns) is not yet supported"
                )
            constraints = col.args.get("constraints") or []
            not_null = [c.kind for c in constraints if isinstance(c.kind, exp.NotNullColumnConstraint)]
            constraints = [c for c in constraints if not isinstance(c.kind, exp.NotNullColumnConstraint)]
            computed = [c.kind for c in constraints if isinstance(c.kind, exp.ComputedColumnConstraint)]
            if (not_null and computed) or len(computed) != len(constraints):
                raise NotYetSupportedError(
                    f"CREATE TABLE: column constraints ('{col.sql('spark')}') are not yet supported"
                )
            if computed:
                declared.append((col.name, computed[0].this))
                continue
            declared.append((col.name, None))
            names.append(col.name)
            row_type = self.rewritten.row_types.get(col.name)
            column_type = parse_type(row_type) if row_type else from_sqlglot(col.args["kind"])
            if not_null:  # `a INT NOT NULL` (`a INT NULL` says the default)
                column_type = column_type.with_nullability(bool(not_null[-1].args.get("allow_null")))
            types.append(column_type)
        options: dict[str, str] = {}
        props = tree.args.get("properties")
        partition_keys: list[str] = []
        for p in props.expressions if props is not None else []:
            if isinstance(p, exp.PartitionedByProperty) and isinstance(p.this, exp.Schema):
                partition_keys = [e.name for e in p.this.expressions]
                continue
            if not isinstance(p, exp.Property):
                raise NotYetSupportedError(f"CREATE TABLE: '{p.sql('spark')}' is not yet supported")
            options[p.this.name if isinstance(p.this, exp.Literal) else str(p.this)] = p.args["value"].name
        if name in self.t_env._catalog:
            if tree.args.get("exists"):
                return TableResult.ok()
            raise validation_error(
                f"Could not execute CreateTable in path `default_catalog`.`default_database`.`{name}`"
            )
        rw = self.rewritten
        table = connector_table(name, names, types, options, partition_keys, rw.primary_key, rw.metadata)
        if any(e is not None for _, e in declared):
            table.computed = (self.text, declared)
            self.computed_columns(Scan(table), declared)  # their mistakes fail the CREATE, as in Flink
        watermark = self.rewritten.watermark
        if watermark is not None:
            if watermark.column not in [n for n, _ in declared]:
                available = ", ".join(f"'{n}'" for n, _ in declared)
                raise validation_error(
                    f"The rowtime attribute field '{watermark.column}' is not defined in the table schema. "
                    f"Available fields: [{available}]"
                )
            table.watermark = watermark
            self.watermark_assigner(self.computed_columns(Scan(table), declared), watermark)  # checks it
        self.t_env._catalog[name] = table
        return TableResult.ok()

    def computed_columns(self, scan: PlanNode, declared: list[tuple[str, Any]]) -> PlanNode:
        """A Calc over the connector's physical columns giving the declared columns, computed
        ones (``doubled AS id * 2``) evaluated per row."""
        scope = Scope([("", n, t) for n, t in zip(scan.names, scan.types, strict=True)])
        rexes = [
            Rex("input", scan.types[scan.names.index(n)], index=scan.names.index(n))
            if e is None
            else self._rex(e, scope, scan, aggregates=False)
            for n, e in declared
        ]
        return Calc(scan, rexes, [n for n, _ in declared])

    def watermark_assigner(self, node: PlanNode, clause: WatermarkClause) -> PlanNode:
        """The table's rows with their event time (``WATERMARK FOR <column> AS <expression>``)."""
        scope = Scope([("", n, t) for n, t in zip(node.names, node.types, strict=True)])
        rex = self._rex(clause.expression, scope, node, aggregates=False)
        interval = auto_watermark_interval_ms(self.t_env.get_config().get_configuration())
        return WatermarkAssigner(node, node.names.index(clause.column), rex, interval)

    # --- queries --------------------------------------------------------------------------------

    def _query(self, tree: Any) -> PlanNode:
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            return self._query_at_depth(tree)
        finally:
            self._depth -= 1

    def _query_at_depth(self, tree: Any) -> PlanNode:
        if isinstance(tree, exp.Union):
            union: PlanNode = Union([self._query(tree.this), self._query(tree.expression)])
            if tree.args.get("distinct"):
                ids = [Rex("input", t, index=i) for i, t in enumerate(union.types)]
                union = aggregate_plan(union, ids, [], list(union.names), [])
            return union
        if isinstance(tree, exp.Subquery):
            return self._query(tree.this)
        if isinstance(tree, exp.Values):  # INSERT INTO t VALUES (..), or VALUES on its own
            return self._values(tree, tree.args.get("alias"))[0]
        if not isinstance(tree, exp.Select):
            raise NotYetSupportedError(
                f"SQL {type(tree).__name__.upper()} ('{tree.sql('spark')}') is not yet supported"
            )
        for clause in ("qualify", "with_", "laterals"):
            if tree.args.get(clause):
                raise NotYetSupportedError(f"SQL {clause.rstrip('_').upper()} is not yet supported by flott")
        where = tree.args.get("where")
        where_cond = where.this if where is not None else None
        if not tree.args.get("joins"):
            where_cond = self._rank_filter(tree, where_cond)
        source, scope = self._from(tree.args.get("from_"))
        for join in tree.args.get("joins") or []:
            source, scope = self._join(source, scope, join)
        if where_cond is not None:
            cond = self._rex(where_cond, scope, source, aggregates=False)
            projections = [Rex("input", t, index=i) for i, t in enumerate(source.types)]
            source = Calc(source, projections, list(source.names), cond)
        items = self._select_items(tree, scope)
        names = []
        for i, item in enumerate(items):
            if isinstance(item, exp.Alias):
                names.append(item.alias)
            elif isinstance(item, exp.Column):
                names.append(item.name)
            else:
                names.append(f"EXPR${i}")
        if self._depth == 1:  # a subquery keeps its names: a reference to a repeated one is ambiguous
            names = _uniquify(names)
        exprs = [item.this if isinstance(item, exp.Alias) else item for item in items]
        if any(isinstance(e, exp.Window) and isinstance(e.this, RANK_FUNCTIONS) for e in exprs):
            source, scope, exprs = self._rank(tree, source, scope, exprs, names)
        elif any(e.find(exp.Window) is not None for e in exprs):
            source, scope, exprs = self._over(tree, source, scope, exprs)
        elif tree.args.get("windows"):
            raise NotYetSupportedError("a WINDOW clause no OVER uses is not supported by flott")
        rexes = [self._rex(e, scope, source, aggregates=True) for e in exprs]
        group = tree.args.get("group")
        having = tree.args.get("having")
        aggs: list[Rex] = []
        for r in rexes:
            collect_aggregates(r, aggs)
        if group is None and not aggs and having is None:
            node: PlanNode = Calc(source, rexes, names)
        else:
            keys = [
                self._rex(g, scope, source, aggregates=False, aliases=dict(zip(names, exprs, strict=True)))
                for g in (group.expressions if group is not None else [])
            ]
            having_rex = (
                self._rex(having.this, scope, source, aggregates=True) if having is not None else None
            )
            node = self._aggregate(source, keys, rexes, names, having_rex, exprs, scope)
        if tree.args.get("distinct"):
            from flott.table.plan import aggregate_plan as agg

            ids = [Rex("input", t, index=i) for i, t in enumerate(node.types)]
            node = agg(node, ids, [], list(node.names), [])
        return self._sort(tree, node)

    def _sort(self, tree: Any, node: PlanNode) -> PlanNode:
        from flott.table.plan import Sort

        order, limit, offset = tree.args.get("order"), tree.args.get("limit"), tree.args.get("offset")
        if order is None and limit is None and offset is None:
            return node
        if self.t_env._streaming:
            raise NotYetSupportedError(
                "ORDER BY / LIMIT in streaming mode (Top-N, sort on time attributes) is not yet "
                "supported by flott"
            )
        keys: list[tuple[int, bool]] = []
        for o in order.expressions if order is not None else []:
            e = o.this
            name = e.name if isinstance(e, exp.Column) else None
            if isinstance(e, exp.Literal) and not e.is_string:
                index = int(e.this) - 1
            elif name in node.names:
                index = node.names.index(name)
            else:
                raise NotYetSupportedError(f"ORDER BY {e.sql('spark')}: only output columns are supported")
            keys.append((index, not o.args.get("desc")))
        n_limit = int(limit.expression.this) if limit is not None else None
        n_offset = int(offset.expression.this) if offset is not None else 0
        return Sort(node, keys, n_offset, n_limit)

    def _aggregate(
        self,
        source: PlanNode,
        keys: list[Rex],
        rexes: list[Rex],
        names: list[str],
        having: Rex | None,
        exprs: list[Any],
        scope: Scope,
    ) -> PlanNode:
        aggs: list[Rex] = []
        for r in rexes:
            collect_aggregates(r, aggs)
        if having is not None:
            collect_aggregates(having, aggs)

        def not_grouped(rex: Rex) -> Exception:
            col = scope.columns[rex.index][1]
            node = next((c for e in exprs for c in e.find_all(exp.Column) if c.name == col), None)
            return self._invalid(node, f"Expression '{col}' is not being grouped")

        agg_node = self._group(source, keys, aggs)
        projections = [rewrite_over_aggregate(r, keys, aggs, not_grouped) for r in rexes]
        cond = rewrite_over_aggregate(having, keys, aggs, not_grouped) if having is not None else None
        return Calc(agg_node, projections, names, cond)

    def _group(self, source: PlanNode, keys: list[Rex], aggs: list[Rex]) -> PlanNode:
        """A window aggregation when the keys hold window_start and window_end of a window TVF,
        else a group aggregation."""
        key_names = [f"$g{i}" for i in range(len(keys))]
        agg_names = [f"$f{i}" for i in range(len(aggs))]
        source = _filter_below_window_tvf(source)
        if isinstance(source, WindowTableFunction) and self.t_env._streaming:  # batch: a group aggregate
            width = len(source.input.names)
            window_keys = {k.index - width for k in keys if k.kind == "input" and k.index >= width}
            if {0, 1} <= window_keys:
                types = [r.type for r in keys] + [a.type for a in aggs]
                return WindowAggregate(source, keys, aggs, key_names + agg_names, types)
        elif self.t_env._streaming and {"window_start", "window_end"} <= {
            source.names[k.index] for k in keys if k.kind == "input"
        }:
            raise NotYetSupportedError(
                "GROUP BY window_start, window_end over a window TVF's rows that were filtered on "
                "window columns or projected first is not yet supported by flott (group the TVF directly)"
            )
        return aggregate_plan(source, keys, aggs, key_names, agg_names)

    def _select_items(self, tree: Any, scope: Scope) -> list[Any]:
        items: list[Any] = []
        for item in tree.expressions:
            if isinstance(item, exp.Star) or (
                isinstance(item, exp.Column) and isinstance(item.this, exp.Star)
            ):
                qualifier = item.table if isinstance(item, exp.Column) else ""
                items.extend(
                    exp.column(n, table=q or None, quoted=True)
                    for q, n, _ in scope.columns
                    if not qualifier or q == qualifier
                )
            else:
                items.append(item)
        return items

    def _join(self, left: PlanNode, scope: Scope, join: Any) -> tuple[PlanNode, Scope]:
        from flott.table.join import plan_join

        if join.args.get("using"):
            raise NotYetSupportedError("JOIN ... USING is not yet supported; write the ON condition")
        side = (join.side or "").upper()
        kind = (join.kind or "").upper()
        if isinstance(join.this, exp.Unnest) and kind == "CROSS" and not side:
            return self._cross_unnest(left, scope, join.this)
        if isinstance(join.this, exp.Lateral):
            return self._lateral(left, scope, join, side)
        if kind in ("CROSS",) or (not side and kind not in ("", "INNER")):
            raise NotYetSupportedError(f"SQL {kind} JOIN is not yet supported")
        right, right_scope = self._from(exp.From(this=join.this))
        both = Scope(scope.columns + right_scope.columns)
        node_names = [n for _, n, _ in both.columns]
        on = join.args.get("on")
        cond = self._rex(on, both, left, aggregates=False) if on is not None else None
        unique = []
        for n in node_names:
            candidate, k = n, 0
            while candidate in unique:
                candidate = f"{n}{k}"
                k += 1
            unique.append(candidate)
        node = plan_join(left, right, cond, side or "INNER", unique)
        return node, Scope([(q, n, t) for (q, n, _), t in zip(both.columns, node.types, strict=True)])

    def _lateral(self, left: PlanNode, scope: Scope, join: Any, side: str) -> tuple[PlanNode, Scope]:
        node, columns = sql_lateral(self, left, scope, join.this, side)
        both = Scope(scope.columns + columns)
        on = join.args.get("on")
        if on is None or (isinstance(on, exp.Boolean) and on.this is True):
            return node, both
        if side == "LEFT":  # Flink's planner refuses it too (TableException)
            raise table_error(
                "Currently Python correlate does not support "
                "conditions in left join."
            )
        cond = self._rex(on, both, node, aggregates=False)
        ids = [Rex("input", t, index=i) for i, t in enumerate(node.types)]
        return Calc(node, ids, list(node.names), cond), both

    def _unnest_alias(self, unnest: Any) -> tuple[str, str]:
        alias = unnest.args.get("alias")
        columns = alias.columns if alias is not None else []
        if unnest.args.get("offset") or len(unnest.expressions) != 1 or len(columns) != 1:
            raise NotYetSupportedError(
                f"'{unnest.sql('spark')}': only UNNEST(<one array>) AS t(<one column>) is supported by flott"
            )
        return alias.name, columns[0].name

    def _cross_unnest(self, left: PlanNode, scope: Scope, unnest: Any) -> tuple[PlanNode, Scope]:
        from flott.table.unnest import Correlate

        qualifier, name = self._unnest_alias(unnest)
        arr = self._rex(unnest.expressions[0], scope, left, aggregates=False)
        if arr.kind != "input" or arr.type.type_root != "ARRAY":
            raise NotYetSupportedError(
                f"UNNEST({unnest.expressions[0].sql('spark')}): only an ARRAY column is supported by flott"
            )
        element = arr.type.element_type  # type: ignore[attr-defined]
        node = Correlate(left, int(arr.index), name, element)
        return node, Scope([*scope.columns, (qualifier, name, element)])

    def _unnest_values(self, unnest: Any) -> tuple[PlanNode, Scope]:
        from flott.table.plan import Values
        from flott.table.planner import common_type

        qualifier, name = self._unnest_alias(unnest)
        array = unnest.expressions[0]
        if not isinstance(array, exp.Array) or not array.expressions:
            raise NotYetSupportedError(
                f"FROM UNNEST({array.sql('spark')}): only a non-empty ARRAY[...] literal is supported "
                "by flott"
            )
        no_input = Values([()], [], [])
        elements = [self._rex(x, Scope([]), no_input, aggregates=False) for x in array.expressions]
        if any(r.kind != "lit" for r in elements):
            raise NotYetSupportedError("FROM UNNEST(ARRAY[...]) of non-literal elements is not yet supported")
        element_type = common_type([r.type for r in elements])
        node = Values([(r.value,) for r in elements], [name], [element_type])
        return node, Scope([(qualifier, name, element_type)])

    def _from(self, from_: Any) -> tuple[PlanNode, Scope]:
        if from_ is None:
            from flott.table.plan import Values

            return Values([()], [], []), Scope([])
        src = from_.this
        if isinstance(src, exp.Unnest):
            return self._unnest_values(src)
        if isinstance(src, exp.Table):
            if src.args.get("db") or src.args.get("catalog"):
                if (src.catalog or "default_catalog") != "default_catalog" or src.db != "default_database":
                    raise self._invalid(src, f"Object '{src.name}' not found")
            if isinstance(src.this, exp.Anonymous):
                raise NotYetSupportedError(
                    f"the table function {src.this.name}(...) in FROM is not yet supported"
                )
            name = src.name
            tvf = self.rewritten.tvfs.get(name)
            if tvf is not None:
                node = self._window_tvf(tvf)
            elif name not in self.t_env._catalog:
                raise self._invalid(src, f"Object '{name}' not found")
            else:
                node = self.t_env._scan(name)
            qualifier = src.alias_or_name
        elif isinstance(src, exp.Subquery) and isinstance(src.this, exp.Values):
            node, qualifier = self._values(src.this, src.args.get("alias") or src.this.args.get("alias"))
        elif isinstance(src, exp.Values):
            node, qualifier = self._values(src, src.args.get("alias"))
        elif isinstance(src, exp.Subquery):
            node = self._query(src.this)
            qualifier = src.alias
        else:
            raise NotYetSupportedError(f"FROM {src.sql('spark')} is not yet supported by flott")
        return node, Scope([(qualifier, n, t) for n, t in zip(node.names, node.types, strict=True)])

    def _values(self, values: Any, alias: Any) -> tuple[PlanNode, str]:
        """``VALUES (..), (..) [AS t(a, b)]``: rows of constant expressions, evaluated when planned.
        As Calcite: a column's type is the rows' common type (strings: VARCHAR of the longest, NOT
        NULL unless a row is NULL), an untyped NULL is refused, columns are EXPR$0.. unless named."""
        from flott.table.plan import Values
        from flott.table.planner import calc_source
        from flott.table.runtime import CompiledCode

        empty = Values([()], [], [])
        rows: list[tuple[Any, ...]] = []
        row_types: list[list[Any]] = []
        for row in values.expressions:
            items = row.expressions if isinstance(row, exp.Tuple) else [row]
            rexes = []
            for item in items:
                if isinstance(item, exp.Null):
                    raise self._invalid(item, "Illegal use of 'NULL'")
                rex = self._rex(item, Scope([]), empty, aggregates=False)
                if rex.kind in ("udf", "agg"):
                    raise NotYetSupportedError(f"'{item.sql('spark')}' in VALUES: only constants are")
                rexes.append(rex)
            if row_types and len(rexes) != len(row_types[0]):
                raise self._invalid(row, "Values passed to VALUES operator must have compatible types")
            consts: list[Any] = []
            rows.append(CompiledCode(calc_source(rexes, None, consts, []), consts).function()(()))
            row_types.append([r.type for r in rexes])
        types = []
        for k in range(len(row_types[0])):
            t = common_type([ts[k] for ts in row_types])
            if t.type_root == "CHAR":
                t = DataTypes.VARCHAR(t.length).with_nullability(t.is_nullable)  # type: ignore[attr-defined]
            types.append(t)
        floats = [k for k, t in enumerate(types) if t.type_root in ("FLOAT", "DOUBLE")]
        if floats:
            rows = [
                tuple(float(v) if k in floats and v is not None else v for k, v in enumerate(r))
                for r in rows
            ]
        names = [f"EXPR${k}" for k in range(len(types))]
        qualifier = ""
        if alias is not None:
            qualifier = alias.name
            columns = [c.name for c in alias.args.get("columns") or []]
            if columns:
                if len(columns) != len(types):
                    raise self._invalid(alias, "List of column aliases must have same degree as table")
                names = columns
        return Values(rows, names, types), qualifier

    def _window_tvf(self, call: WindowTvfCall) -> PlanNode:
        name = call.table.split(".")[-1].strip("`")
        if name not in self.t_env._catalog:
            raise validation_error(f"SQL validation failed. Object '{name}' not found")
        node = self.t_env._scan(name)

        def column(c: str) -> int:
            if c not in node.names:
                raise validation_error(f"SQL validation failed. Column '{c}' not found in table '{name}'")
            return node.names.index(c)

        spec = WindowSpec(call.kind, call.intervals_ms, [column(k) for k in call.partition_keys])
        return WindowTableFunction(node, column(call.time_column), spec)

    # --- expressions ----------------------------------------------------------------------------

    def _field_access(self, e: Any, scope: Scope) -> Rex | None:
        """``p.name`` (or ``t.p.name``) where ``p`` is a ROW column: the field, with Calcite's message
        for a field the row does not have; None when ``p`` is no column (a table qualifier)."""
        qualifier, column = (e.args.get("db"), e.table) if e.args.get("db") else (None, e.table)
        qualifier = qualifier.name if qualifier is not None and hasattr(qualifier, "name") else qualifier
        found = [
            i
            for i, (q, n, _) in enumerate(scope.columns)
            if n == column and (not qualifier or q == qualifier)
        ]
        if len(found) != 1 or not isinstance(scope.columns[found[0]][2], RowType):
            return None
        i = found[0]
        row = Rex("input", scope.columns[i][2], index=i)
        index = field_index(row.type, e.name)
        if index is None:
            first = e.args.get("db") or e.args["table"]
            table = scope.columns[i][0]
            raise self._invalid((first, e.this), f"Column '{column}.{e.name}' not found in table '{table}'")
        return field_access(row, index)

    def _rex(
        self, e: Any, scope: Scope, source: PlanNode, aggregates: bool, aliases: dict[str, Any] | None = None
    ) -> Rex:
        def go(x: Any) -> Rex:
            return self._rex(x, scope, source, aggregates, aliases)

        if isinstance(e, exp.Paren):
            return go(e.this)
        if isinstance(e, exp.Column):
            name, table = e.name, e.table
            matches = [
                i for i, (q, n, _) in enumerate(scope.columns) if n == name and (not table or q == table)
            ]
            if not matches and table:  # p.name, t.p.name: a field of a ROW column
                access = self._field_access(e, scope)
                if access is not None:
                    return access
            if not matches:
                if aliases and name in aliases and not table:
                    return go(aliases[name])
                if table and not any(q == table for q, _, _ in scope.columns):
                    raise self._invalid(e.args["table"], f"Table '{table}' not found")
                raise self._invalid(e, f"Column '{name}' not found in any table")
            if len(matches) > 1:
                raise self._invalid(e, f"Column '{name}' is ambiguous")
            i = matches[0]
            return Rex("input", scope.columns[i][2], index=i)
        if isinstance(e, exp.Literal):
            if e.is_string:
                return Rex("lit", literal_type(e.this), value=e.this)
            text = e.this
            if any(c in text for c in "eE"):
                return Rex("lit", literal_type(float(text)), value=float(text))
            if "." in text:
                v = decimal.Decimal(text)
                return Rex("lit", literal_type(v), value=v)
            return Rex("lit", literal_type(int(text)), value=int(text))
        if isinstance(e, exp.Boolean):
            return Rex("lit", literal_type(bool(e.this)), value=bool(e.this))
        if isinstance(e, exp.Interval):
            from flott.table.sql_windows import interval_timedelta

            return Rex("lit", literal_type(interval_timedelta(e)), value=interval_timedelta(e))
        if isinstance(e, exp.Null):
            return Rex("lit", literal_type(None), value=None)
        for agg_cls, name in _AGGREGATES.items():
            if isinstance(e, agg_cls):
                return self._agg(name, e, go, aggregates)
        for bin_cls, name in _BINARY.items():
            if isinstance(e, bin_cls):
                return make_call(name, [go(e.this), go(e.expression)])
        if isinstance(e, exp.Not) and isinstance(e.this, exp.Is):
            return make_call("isNotNull", [go(e.this.this)])
        for un_cls, name in _UNARY.items():
            if isinstance(e, un_cls):
                return make_call(name, [go(e.this)])
        if isinstance(e, exp.Is):
            if isinstance(e.expression, exp.Null):
                return make_call("isNull", [go(e.this)])
            if isinstance(e.expression, exp.Boolean):
                return make_call("isTrue" if e.expression.this else "isFalse", [go(e.this)])
        if isinstance(e, exp.In):
            if e.args.get("query"):
                raise NotYetSupportedError("IN (subquery) is not yet supported")
            return make_call("in", [go(e.this), *(go(x) for x in e.expressions)])
        if isinstance(e, exp.Between):
            return make_call("between", [go(e.this), go(e.args["low"]), go(e.args["high"])])
        if isinstance(e, exp.Substring):
            args = [go(e.this), go(e.args["start"])]
            if e.args.get("length") is not None:
                args.append(go(e.args["length"]))
            if args[0].type.type_root not in ("CHAR", "VARCHAR") or any(
                a.type.type_root not in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT") for a in args[1:]
            ):  # Calcite's operand check: a string, then integer positions
                shown = ", ".join(f"<{_calcite_type(a.type)}>" for a in args)
                raise self._invalid(
                    e,
                    f"Cannot apply 'SUBSTRING' to arguments of type 'SUBSTRING({shown})'. Supported "
                    "form(s): 'SUBSTRING(<CHAR> FROM <INTEGER>)'\n'SUBSTRING(<CHAR> FROM <INTEGER> FOR "
                    "<INTEGER>)'",
                )
            return make_call("substring", args)
        if isinstance(e, exp.Concat):
            return make_call("concat", [go(x) for x in e.expressions])
        if isinstance(e, exp.Coalesce):
            return make_call("coalesce", [go(e.this), *(go(x) for x in e.expressions)])
        if isinstance(e, exp.Trim):
            if e.args.get("position") or e.args.get("expression") is not None:
                raise NotYetSupportedError(
                    f"{e.sql('spark')}: TRIM with LEADING/TRAILING/characters is not yet supported"
                )
            return make_call("trim", [go(e.this)])
        if isinstance(e, exp.Round):
            return make_call(
                "round",
                [
                    go(e.this),
                    go(e.args["decimals"])
                    if e.args.get("decimals") is not None
                    else Rex("lit", literal_type(0), value=0),
                ],
            )
        if type(e) is exp.Cast and isinstance(e.this, exp.Literal) and e.this.is_string:
            typed = self._typed_literal(e)
            if typed is not None:
                return typed
        if isinstance(e, exp.Extract):
            unit = check_unit(e.this.name, EXTRACT_UNITS, "EXTRACT")
            return make_call("extract", [Rex("lit", literal_type(unit), value=unit), go(e.expression)])
        for part_cls, unit in _DATE_PARTS.items():
            if isinstance(e, part_cls):
                inner = e.this.this if isinstance(e.this, exp.TsOrDsToDate) else e.this
                return make_call("extract", [Rex("lit", literal_type(unit), value=unit), go(inner)])
        if isinstance(e, exp.TimestampDiff):
            unit = check_unit(e.args["unit"].name, _DIFF_UNITS, "TIMESTAMPDIFF")
            unit_rex = Rex("lit", literal_type(unit), value=unit)
            return make_call("timestampDiff", [unit_rex, go(e.expression), go(e.this)])
        if isinstance(e, exp.Floor | exp.Ceil) and e.args.get("to") is not None:
            unit = check_unit(e.args["to"].name, FLOOR_UNITS, "FLOOR/CEIL")
            name = "floorTo" if isinstance(e, exp.Floor) else "ceilTo"
            return make_call(name, [go(e.this), Rex("lit", literal_type(unit), value=unit)])
        if isinstance(e, exp.Cast | exp.TryCast):
            inner = go(e.this)
            target = from_sqlglot(e.args["to"])
            is_try = isinstance(e, exp.TryCast)
            nullable = inner.type.is_nullable or is_try
            return Rex(
                "cast", target.with_nullability(nullable), value="try" if is_try else None, operands=[inner]
            )
        if isinstance(e, exp.Replace):
            return make_call("replace", [go(e.this), go(e.expression), go(e.args["replacement"])])
        if isinstance(e, exp.Pad):
            if e.args.get("fill_pattern") is None:
                raise NotYetSupportedError(
                    f"{e.sql('spark')}: LPAD/RPAD without a pad string is not yet supported"
                )
            name = "lpad" if e.args.get("is_left") else "rpad"
            return make_call(name, [go(e.this), go(e.expression), go(e.args["fill_pattern"])])
        if isinstance(e, exp.StrPosition):
            if e.args.get("position") is not None:
                raise NotYetSupportedError(
                    f"{e.sql('spark')}: POSITION/LOCATE from an offset is not yet supported"
                )
            return make_call("position", [go(e.args["substr"]), go(e.this)])
        if isinstance(e, exp.Reverse):
            return make_call("reverse", [go(e.this)])
        if isinstance(e, exp.Nullif):
            return make_call("nullif", [go(e.this), go(e.expression)])
        if isinstance(e, exp.Floor | exp.Ceil):
            if e.args.get("decimals") is not None or e.args.get("to") is not None:
                raise NotYetSupportedError(f"{e.sql('spark')}: FLOOR/CEIL to a unit is not yet supported")
            return make_call("floor" if isinstance(e, exp.Floor) else "ceil", [go(e.this)])
        if isinstance(e, exp.Case):
            if e.this is not None:
                subject = go(e.this)
                ops = []
                for w in e.args["ifs"]:
                    ops += [make_call("equals", [subject, go(w.this)]), go(w.args["true"])]
            else:
                ops = []
                for w in e.args["ifs"]:
                    ops += [go(w.this), go(w.args["true"])]
            if e.args.get("default") is not None:
                ops.append(go(e.args["default"]))
            return make_call("case", ops)
        if isinstance(e, exp.If):
            return make_call("if", [go(e.this), go(e.args["true"]), go(e.args["false"])])
        if isinstance(e, exp.Anonymous) or isinstance(e, exp.Func):
            fname = (e.name if isinstance(e, exp.Anonymous) else e.sql_name()).upper()
            fn = self.t_env._functions.get(fname.lower())
            args = [go(x) for x in e.expressions]
            if fn is not None:
                from flott.table.planner import Resolver

                return Resolver([], [], {}, aggregates).udf_call(fn, args)
            if fname in _NAMED and isinstance(e, exp.Anonymous):
                return make_call(_NAMED[fname], args)
            if e.name in RENAMED_BY_ALIAS and isinstance(e, exp.Anonymous):
                if e.name == "_FIX_TIMESTAMP" and not args:
                    raise NotYetSupportedError("UNIX_TIMESTAMP() of the current time is not yet supported")
                return make_call(RENAMED_BY_ALIAS[e.name], args)
            if not isinstance(e, exp.Anonymous) or fname in _FLINK_FUNCTIONS_NOT_YET:
                raise NotYetSupportedError(f"the SQL function {fname} is not yet supported by flott")
            raise self._invalid(e, f"No match found for function signature {fname.lower()}(...)")
        raise NotYetSupportedError(f"the SQL expression '{e.sql('spark')}' is not yet supported by flott")

    def _typed_literal(self, e: Any) -> Rex | None:
        """``DATE '2024-01-01'``, ``TIME '10:00:00'``, ``TIMESTAMP '2024-01-01 10:00:00.123'`` (its
        precision the fraction's digits, as Flink types it); a malformed one is a parse error."""
        import datetime

        text = e.this.this
        kind = e.args["to"].this.name
        if e.args["to"].expressions:
            return None
        fraction = len(text.strip().rpartition(".")[2]) if "." in text else 0
        try:
            if kind == "DATE":
                return Rex("lit", DataTypes.DATE(False), value=datetime.date.fromisoformat(text.strip()))
            if kind == "TIME":
                return Rex(
                    "lit", DataTypes.TIME(fraction, False), value=datetime.time.fromisoformat(text.strip())
                )
            if kind == "TIMESTAMPTZ":
                return Rex(
                    "lit",
                    DataTypes.TIMESTAMP(fraction, False),
                    value=datetime.datetime.fromisoformat(text.strip()),
                )
        except ValueError:
            raise SqlParseError(
                "org.apache.flink.table.api.SqlParserException: SQL parse failed. "
                f"Illegal {kind.removesuffix('TZ')} literal '{text}'"
            ) from None
        return None

    def _agg(self, name: str, e: Any, go: Any, aggregates: bool) -> Rex:
        from flott.table.planner import aggregate_type

        if not aggregates:
            raise self._invalid(e, "Aggregate expression is illegal in GROUP BY clause")
        arg = e.this
        distinct = False
        if isinstance(arg, exp.Distinct):
            distinct = True
            arg = arg.expressions[0]
        if isinstance(arg, exp.Star) or arg is None:
            operands: list[Rex] = []
        else:
            operands = [go(arg)]
        return Rex(
            "agg",
            aggregate_type(name, operands[0].type if operands else None),
            value=name,
            operands=operands,
            distinct=distinct,
        )
