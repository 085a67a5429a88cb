"""to_pandas() dtypes with and without nulls, and from_pandas() with names or DataTypes as the schema."""
import datetime
import decimal

import pandas as pd
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    schema = DataTypes.ROW([
        DataTypes.FIELD("small", DataTypes.SMALLINT()), DataTypes.FIELD("n", DataTypes.INT()),
        DataTypes.FIELD("flag", DataTypes.BOOLEAN()), DataTypes.FIELD("ratio", DataTypes.FLOAT()),
        DataTypes.FIELD("price", DataTypes.DECIMAL(6, 2)), DataTypes.FIELD("day", DataTypes.DATE()),
        DataTypes.FIELD("at", DataTypes.TIMESTAMP(3)), DataTypes.FIELD("seen", DataTypes.TIMESTAMP_LTZ(3)),
    ])
    rows = [
        (1, 10, True, 0.5, decimal.Decimal("1.5"), datetime.date(2024, 5, 1),
         datetime.datetime(2024, 5, 1, 8, 30), datetime.datetime(2024, 5, 1, 8, 30, 0, 250000)),
        (2, None, None, None, None, None, None, None),
    ]
    table = t_env.from_elements(rows, schema)
    full = table.where(col("small") == 1).to_pandas()
    print(full.drop(columns=["seen"]).to_string())  # pandas 2 and 3 print an aware time differently
    print(full["seen"][0] == pd.Timestamp("2024-05-01 08:30:00.25", tz="UTC"))
    print(list(full.dtypes.astype(str)))
    with_nulls = table.to_pandas().sort_values("small").reset_index(drop=True)
    print(with_nulls.drop(columns=["seen"]).to_string())
    print(with_nulls["seen"].isna().tolist())
    print(list(with_nulls.dtypes.astype(str)))
    empty = table.where(col("small") > 5).to_pandas()
    print(empty.shape, list(empty.dtypes.astype(str)))

    frame = pd.DataFrame({"k": [3, 1, 2], "score": [0.25, None, 2.0], "ok": [True, False, True]})
    named = t_env.from_pandas(frame, ["key", "s", "good"])
    named.print_schema()
    named.where(col("good")).select(col("key"), col("s") * 2).execute().print()
    typed = t_env.from_pandas(frame, [DataTypes.TINYINT(), DataTypes.FLOAT(), DataTypes.BOOLEAN()])
    typed.print_schema()
    back = typed.to_pandas().sort_values("k").reset_index(drop=True)
    print(back.to_string())
    print(list(back.dtypes.astype(str)))


if __name__ == "__main__":
    main()
