"""from_elements with a DataTypes.ROW schema: the common column types and how print() shows them."""
import datetime
from decimal import Decimal

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    schema = DataTypes.ROW([
        DataTypes.FIELD("i", DataTypes.INT()),
        DataTypes.FIELD("b", DataTypes.BIGINT()),
        DataTypes.FIELD("d", DataTypes.DOUBLE()),
        DataTypes.FIELD("s", DataTypes.STRING()),
        DataTypes.FIELD("flag", DataTypes.BOOLEAN()),
        DataTypes.FIELD("price", DataTypes.DECIMAL(10, 2)),
        DataTypes.FIELD("day", DataTypes.DATE()),
        DataTypes.FIELD("ts", DataTypes.TIMESTAMP(3)),
    ])
    rows = [
        (1, 10000000000, 0.1, "a", True, Decimal("12.50"), datetime.date(2024, 1, 15),
         datetime.datetime(2024, 1, 15, 10, 30, 0, 123000)),
        (-7, -1, 1e20, "with space", False, Decimal("-0.05"), datetime.date(1999, 12, 31),
         datetime.datetime(1999, 12, 31, 23, 59, 59)),
        (None, None, None, None, None, None, None, None),
    ]
    table = t_env.from_elements(rows, schema)
    table.print_schema()
    table.execute().print()


if __name__ == "__main__":
    main()
