"""Built-in string functions in SQL: UPPER, LOWER, CONCAT, SUBSTRING, CHAR_LENGTH, TRIM, REPLACE, ||."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("words", t_env.from_elements(
        [("Flink", " padded "), ("stream", "x"), ("SQL", "")], ["w", "p"]))
    t_env.execute_sql("""
        SELECT UPPER(w) AS up, LOWER(w) AS low, CONCAT(w, '-', p) AS joined, w || '!' AS bang,
               SUBSTRING(w FROM 2 FOR 3) AS mid, SUBSTRING(w, 1, 2) AS head, CHAR_LENGTH(w) AS len,
               TRIM(p) AS trimmed, REPLACE(w, 'S', 's') AS replaced, POSITION('i' IN w) AS pos,
               INITCAP(LOWER(w)) AS cap, LPAD(w, 8, '*') AS lpadded
        FROM words
    """).print()


if __name__ == "__main__":
    main()
