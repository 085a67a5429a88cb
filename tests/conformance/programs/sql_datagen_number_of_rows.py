"""datagen with 'number-of-rows' and sequence fields, in batch mode; values checked by aggregates."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql("""
        CREATE TABLE gen (
            id INT,
            amount BIGINT
        ) WITH (
            'connector' = 'datagen',
            'number-of-rows' = '100',
            'fields.id.kind' = 'sequence',
            'fields.id.start' = '1',
            'fields.id.end' = '100',
            'fields.amount.kind' = 'sequence',
            'fields.amount.start' = '1000',
            'fields.amount.end' = '1099'
        )
    """)
    t_env.execute_sql("""
        SELECT COUNT(*) AS n, MIN(id) AS lo, MAX(id) AS hi, SUM(amount) AS total,
               COUNT(DISTINCT MOD(id, 7)) AS residues
        FROM gen
    """).print()
    t_env.execute_sql("SELECT id, amount FROM gen WHERE id > 95").print()


if __name__ == "__main__":
    main()
