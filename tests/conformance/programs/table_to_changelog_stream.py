"""to_changelog_stream of an updating Table: rows arrive with their kinds (+I, -U, +U)."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import StreamTableEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env)
    ds = env.from_collection([("a", 1), ("b", 2), ("a", 3), ("a", 4)],
                             type_info=Types.ROW_NAMED(["k", "v"], [Types.STRING(), Types.INT()]))
    t_env.create_temporary_view("input", t_env.from_data_stream(ds))
    totals = t_env.sql_query("SELECT k, SUM(v) AS total FROM input GROUP BY k")
    t_env.to_changelog_stream(totals) \
        .map(lambda r: f"{r.get_row_kind()} {r[0]} {r[1]}", Types.STRING()) \
        .print()
    env.execute("table_to_changelog_stream")


if __name__ == "__main__":
    main()
