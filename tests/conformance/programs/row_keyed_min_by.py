"""Row records with named fields: key_by a field, min_by/max_by by field name."""
from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    typ = Types.ROW_NAMED(["city", "temp"], [Types.STRING(), Types.INT()])
    rows = [Row("oslo", 3), Row("rome", 18), Row("oslo", -2), Row("rome", 21), Row("oslo", 5)]
    ds = env.from_collection(rows, type_info=typ)
    ds.key_by(lambda r: r[0]).min_by("temp").print("coldest")
    ds.key_by(lambda r: r[0]).max_by("temp").print("warmest")
    env.execute("row_keyed_min_by")


if __name__ == "__main__":
    main()
