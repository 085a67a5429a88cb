"""Top-N with ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) WHERE rn <= N, batch and streaming."""
from pyflink.table import EnvironmentSettings, TableEnvironment

SCORES = [("math", "alice", 90), ("math", "bob", 75), ("math", "carol", 95), ("art", "alice", 60),
          ("art", "dave", 88), ("math", "erin", 80), ("art", "bob", 70)]

QUERY = """
    SELECT subject, student, score, rn FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY subject ORDER BY score DESC) AS rn FROM scores
    ) WHERE rn <= 2
"""


def main():
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    batch.create_temporary_view("scores", batch.from_elements(SCORES, ["subject", "student", "score"]))
    batch.execute_sql(QUERY).print()
    stream = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    stream.get_config().set("parallelism.default", "1")
    stream.create_temporary_view("scores", stream.from_elements(SCORES, ["subject", "student", "score"]))
    stream.execute_sql(QUERY).print()


if __name__ == "__main__":
    main()
