"""to_pandas() and from_pandas(): a Table to a DataFrame and back."""
import pandas as pd
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t = t_env.from_elements([(1, "x", 0.5), (2, "y", 1.5), (3, "z", None)], ["id", "name", "score"])
    df = t.where(col("id") > 1).to_pandas().sort_values("id").reset_index(drop=True)
    print(df.to_string())
    print(list(df.dtypes.astype(str)))
    frame = pd.DataFrame({"a": [1, 2, 3], "b": ["p", "q", "r"]})
    back = t_env.from_pandas(frame, DataTypes.ROW([DataTypes.FIELD("a", DataTypes.BIGINT()),
                                                   DataTypes.FIELD("b", DataTypes.STRING())]))
    back.select(col("a") + 1, col("b")).execute().print()


if __name__ == "__main__":
    main()
