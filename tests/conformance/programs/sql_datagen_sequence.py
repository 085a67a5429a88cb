"""CREATE TABLE with the datagen connector: sequence fields are deterministic; computed columns on them."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("""
        CREATE TABLE numbers (
            id BIGINT,
            label STRING,
            doubled AS id * 2,
            bucket AS MOD(id, 3)
        ) WITH (
            'connector' = 'datagen',
            'fields.id.kind' = 'sequence',
            'fields.id.start' = '1',
            'fields.id.end' = '9',
            'fields.label.kind' = 'sequence',
            'fields.label.start' = '100',
            'fields.label.end' = '108'
        )
    """)
    t_env.execute_sql("SELECT id, doubled, bucket FROM numbers").print()
    t_env.execute_sql("SELECT bucket, COUNT(*) AS cnt, SUM(id) AS total FROM numbers GROUP BY bucket") \
        .print()


if __name__ == "__main__":
    main()
