"""``StatementSet``: several INSERTs run as one job (each sink a branch of the same plan)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flott.table.table import Table
    from flott.table.table_environment import TableEnvironment
    from flott.table.table_result import TableResult

__all__ = ["StatementSet"]


class StatementSet:
    def __init__(self, t_env: TableEnvironment) -> None:
        self._t_env = t_env
        self._inserts: list[tuple[Any, Table]] = []

    def add_insert_sql(self, stmt: str) -> StatementSet:
        from flott.table.sql import SqlPlanner

        self._inserts.append(SqlPlanner(self._t_env, stmt).insert())
        return self

    def add_insert(
        self, target_path_or_descriptor: Any, table: Table, overwrite: bool = False
    ) -> StatementSet:
        if overwrite:
            from flott.table.plan import refuse

            raise refuse("INSERT OVERWRITE")
        self._inserts.append((target_path_or_descriptor, table))
        return self

    def execute(self) -> TableResult:
        inserts, self._inserts = self._inserts, []
        return self._t_env._execute_inserts(inserts)
