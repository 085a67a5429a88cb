"""TableDescriptor.for_connector with a Schema: a datagen source and a print sink via execute_insert."""
from pyflink.table import DataTypes, EnvironmentSettings, Schema, TableDescriptor, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_table("source", TableDescriptor.for_connector("datagen")
                                 .schema(Schema.new_builder()
                                         .column("id", DataTypes.BIGINT())
                                         .column_by_expression("square", "id * id")
                                         .build())
                                 .option("fields.id.kind", "sequence")
                                 .option("fields.id.start", "1")
                                 .option("fields.id.end", "5")
                                 .build())
    t_env.create_temporary_table("sink", TableDescriptor.for_connector("print")
                                 .schema(Schema.new_builder()
                                         .column("id", DataTypes.BIGINT())
                                         .column("square", DataTypes.BIGINT())
                                         .build())
                                 .option("print-identifier", "squares")
                                 .build())
    t_env.from_path("source").where(col("id") % 2 == 1).execute_insert("sink").wait()
    print(t_env.from_path("source").get_schema())


if __name__ == "__main__":
    main()
