"""Vectorized (pandas) scalar UDFs in SQL: registered with create_temporary_function and
create_temporary_system_function, called in SELECT and WHERE next to built-in functions, in batch
and streaming mode."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.udf import udf


@udf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def with_tax(price):
    return price * 1.25


@udf(result_type=DataTypes.STRING(), func_type="pandas")
def label(name, qty):
    return name.str.capitalize() + " x" + qty.astype(str)


@udf(result_type=DataTypes.BOOLEAN(), func_type="pandas")
def in_stock(qty):
    return qty > 0


def main():
    rows = [("pen", 2.0, 10), ("ink", 8.0, 0), ("pad", 4.0, 3), ("cap", 0.4, 25)]
    for settings in (EnvironmentSettings.in_batch_mode(), EnvironmentSettings.in_streaming_mode()):
        t_env = TableEnvironment.create(settings)
        t_env.get_config().set("parallelism.default", "1")
        t_env.create_temporary_view("items", t_env.from_elements(rows, ["name", "price", "qty"]))
        t_env.create_temporary_function("with_tax", with_tax)
        t_env.create_temporary_system_function("label", label)
        t_env.create_temporary_system_function("in_stock", in_stock)
        t_env.execute_sql(
            "SELECT label(name, qty) AS what, with_tax(price) AS gross, UPPER(name) AS up, "
            "qty * 2 AS dbl FROM items WHERE in_stock(qty)"
        ).print()
        t_env.execute_sql(
            "SELECT name FROM items WHERE with_tax(price) > 3 AND qty < 20"
        ).print()


if __name__ == "__main__":
    main()
