"""BYTES, BINARY(n) and VARBINARY(n) in DDL, nested in MAP and ARRAY, and in CASTs: Flink's schema
print, the tableau's x'..' form, BINARY padding with zero bytes and VARBINARY cutting, a UDF whose
result type is given as the string 'BYTES', and bytes read back as a string (UTF-8)."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import udf


@udf(result_type="BYTES")
def utf8(s):
    return s.encode("utf-8")


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql("""
        CREATE TABLE gen (b BYTES, c VARBINARY(3), d BINARY(2))
        WITH ('connector' = 'datagen', 'number-of-rows' = '3', 'fields.b.length' = '4')
    """)
    t_env.execute_sql("""
        CREATE TABLE nested (v VARBINARY, e BINARY, m MAP<STRING, BYTES>, a ARRAY<BYTES>)
        WITH ('connector' = 'blackhole')
    """)
    t_env.from_path("gen").print_schema()
    t_env.from_path("nested").print_schema()
    t_env.execute_sql("""
        SELECT CHAR_LENGTH(CAST(b AS STRING)) > 0 AS b4, c IS NOT NULL AS c3, d IS NOT NULL AS d2
        FROM gen
    """).print()
    t_env.execute_sql("""
        SELECT CAST('ab' AS BYTES) AS x, CAST('ab' AS VARBINARY(1)) AS y, CAST('ab' AS BINARY(3)) AS z,
               CAST(CAST('héllo' AS BYTES) AS STRING) AS back
        FROM (VALUES (1)) AS t(i)
    """).print()
    words = t_env.from_elements([("ab",), ("ü",)], DataTypes.ROW([DataTypes.FIELD("w", DataTypes.STRING())]))
    words.select(col("w"), utf8(col("w")).alias("raw")).execute().print()


if __name__ == "__main__":
    main()
