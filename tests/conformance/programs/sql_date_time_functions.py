"""Date and time functions on fixed values (no clock): literals, EXTRACT, DATE_FORMAT, arithmetic."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("table.local-time-zone", "UTC")
    t_env.execute_sql("""
        SELECT DATE '2024-02-28' + INTERVAL '1' DAY AS next_day,
               TIMESTAMP '2024-01-15 10:30:45.123' AS ts,
               EXTRACT(YEAR FROM DATE '2024-03-01') AS y,
               MONTH(DATE '2024-03-01') AS m,
               DAYOFMONTH(DATE '2024-03-01') AS d,
               HOUR(TIMESTAMP '2024-01-15 10:30:45') AS h,
               DATE_FORMAT(TIMESTAMP '2024-01-15 10:30:45', 'yyyy/MM/dd HH:mm') AS formatted,
               TO_DATE('2024-07-04') AS parsed_date,
               TO_TIMESTAMP('2024-07-04 12:00:00') AS parsed_ts,
               TIMESTAMPDIFF(DAY, TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-03-01 00:00:00') AS days,
               FLOOR(TIMESTAMP '2024-01-15 10:30:45' TO HOUR) AS hour_start,
               TIMESTAMP '2024-01-15 10:30:45' + INTERVAL '90' MINUTE AS later,
               FROM_UNIXTIME(0) AS epoch,
               UNIX_TIMESTAMP('2024-01-01 00:00:00') AS unix_s
    """).print()


if __name__ == "__main__":
    main()
