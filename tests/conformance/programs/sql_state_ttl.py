"""table.exec.state.ttl: state idle longer than the TTL is gone. A UDF pauses the stream for five
seconds; a group aggregate starts its key anew after the pause (+I, not -U/+U). (A regular join is
left out: PyFlink runs the UDF once per join side, in two operators whose pauses race, so its output
differs from run to run; tests/table/test_state_ttl.py covers joins and deduplication.) Bundles of one
record make PyFlink hand each row on as it is processed, and a buffer timeout of 0 makes both flush the
rows from before the pause before it starts."""
import time

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.udf import udf


@udf(result_type=DataTypes.STRING())
def after_pause(k):
    if k == "pause":
        time.sleep(5)
    return k


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = t_env.get_config()
    config.set("parallelism.default", "1")
    config.set("python.fn-execution.bundle.size", "1")
    config.set("execution.buffer-timeout", "0 ms")
    config.set("table.exec.state.ttl", "1 s")
    t_env.create_temporary_function("after_pause", after_pause)
    events = t_env.from_elements(
        [("a", "L", 1), ("b", "L", 2), ("b", "R", 20), ("pause", "-", 0), ("a", "R", 10),
         ("b", "L", 3), ("a", "L", 4), ("a", "R", 40)],
        ["k", "side", "v"])
    t_env.create_temporary_view("events", events)
    t_env.create_temporary_view(
        "paced", t_env.sql_query("SELECT after_pause(k) AS k, side, v FROM events"))
    t_env.execute_sql("SELECT k, SUM(v) AS total, COUNT(*) AS n FROM paced GROUP BY k").print()


if __name__ == "__main__":
    main()
