"""Table API join, left_outer_join, right_outer_join and full_outer_join with predicates (batch mode)."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    left = t_env.from_elements([(1, "a"), (2, "b"), (3, "c")], ["lid", "lv"])
    right = t_env.from_elements([(2, "x"), (3, "y"), (3, "z"), (4, "w")], ["rid", "rv"])
    left.join(right).where(col("lid") == col("rid")).select(col("lid"), col("lv"), col("rv")) \
        .execute().print()
    left.join(right, col("lid") == col("rid")).select(col("lv"), col("rv")).execute().print()
    left.left_outer_join(right, col("lid") == col("rid")).select(col("lid"), col("rv")).execute().print()
    left.right_outer_join(right, col("lid") == col("rid")).select(col("lv"), col("rid")).execute().print()
    left.full_outer_join(right, col("lid") == col("rid")).select(col("lid"), col("rid")).execute().print()


if __name__ == "__main__":
    main()
