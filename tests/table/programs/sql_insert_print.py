from pyflink.table import DataTypes, EnvironmentSettings, Schema, TableDescriptor, TableEnvironment
from pyflink.table.expressions import col

t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t_env.get_config().set("parallelism.default", "1")
t_env.create_temporary_view(
    "clicks", t_env.from_elements([("alice", "/home"), ("bob", "/cart"), ("alice", "/cart")], ["usr", "url"])
)
t_env.execute_sql("CREATE TABLE sink1 (usr STRING, url STRING) WITH ('connector' = 'print')").print()
t_env.execute_sql("INSERT INTO sink1 SELECT usr, url FROM clicks WHERE url = '/cart'").wait()
t_env.execute_sql(
    "CREATE TABLE counts (usr STRING, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'counts')"
)
t_env.execute_sql("INSERT INTO counts SELECT usr, COUNT(*) FROM clicks GROUP BY usr").wait()
t_env.execute_sql("CREATE TABLE nothing (usr STRING) WITH ('connector' = 'blackhole')")
t_env.create_temporary_table(
    "described",
    TableDescriptor.for_connector("print")
    .schema(Schema.new_builder().column("url", DataTypes.STRING()).column("hits", DataTypes.BIGINT()).build())
    .option("print-identifier", "desc")
    .build(),
)
statements = t_env.create_statement_set()
statements.add_insert_sql("INSERT INTO nothing SELECT usr FROM clicks")
statements.add_insert(
    "described", t_env.from_path("clicks").group_by(col("url")).select(col("url"), col("usr").count)
)
statements.execute().wait()
t_env.execute_sql(
    "CREATE TABLE gen (id INT, label STRING) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', "
    "'fields.id.start' = '1', 'fields.id.end' = '5', 'fields.label.length' = '4')"
)
t_env.execute_sql("SELECT id, CHAR_LENGTH(label) AS len FROM gen").print()
print(sorted(t_env.list_tables()))
