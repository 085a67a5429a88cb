"""A regular inner join in streaming mode over append-only inputs: only +I rows."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.create_temporary_view("users", t_env.from_elements(
        [(1, "alice"), (2, "bob"), (3, "carol")], ["uid", "name"]))
    t_env.create_temporary_view("events", t_env.from_elements(
        [(1, "login"), (2, "login"), (1, "buy"), (5, "login"), (3, "logout")], ["uid", "action"]))
    t_env.execute_sql("""
        SELECT u.name, e.action FROM users AS u INNER JOIN events AS e ON u.uid = e.uid
    """).print()


if __name__ == "__main__":
    main()
