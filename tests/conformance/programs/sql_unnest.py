"""CROSS JOIN UNNEST of an ARRAY column, and UNNEST of an array literal."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    schema = DataTypes.ROW([DataTypes.FIELD("id", DataTypes.INT()),
                            DataTypes.FIELD("tags", DataTypes.ARRAY(DataTypes.STRING()))])
    t_env.create_temporary_view("posts", t_env.from_elements(
        [(1, ["flink", "sql"]), (2, []), (3, ["python"])], schema))
    t_env.execute_sql("SELECT id, tag FROM posts CROSS JOIN UNNEST(tags) AS t(tag)").print()
    t_env.execute_sql("SELECT x FROM UNNEST(ARRAY[3, 1, 2]) AS t(x)").print()
    t_env.execute_sql("SELECT id, CARDINALITY(tags) AS n, tags FROM posts").print()


if __name__ == "__main__":
    main()
