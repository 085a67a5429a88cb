"""INSERT INTO a blackhole table: the job runs to its end and prints nothing; its TableResult says so."""
from pyflink.table import EnvironmentSettings, ResultKind, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql("""
        CREATE TABLE gen (id BIGINT) WITH (
            'connector' = 'datagen', 'number-of-rows' = '1000', 'fields.id.kind' = 'sequence',
            'fields.id.start' = '1', 'fields.id.end' = '1000')
    """)
    t_env.execute_sql("CREATE TABLE sink (id BIGINT, sq BIGINT) WITH ('connector' = 'blackhole')")
    result = t_env.execute_sql("INSERT INTO sink SELECT id, id * id FROM gen")
    result.wait()
    print(result.get_result_kind() == ResultKind.SUCCESS_WITH_CONTENT)
    print(result.get_table_schema().get_field_names())
    print(result.get_job_client() is not None)


if __name__ == "__main__":
    main()
