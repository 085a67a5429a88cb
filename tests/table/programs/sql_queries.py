from pyflink.table import EnvironmentSettings, TableEnvironment

t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t_env.get_config().set("parallelism.default", "1")
people = t_env.from_elements(
    [
        (1, "Alice", "Berlin", 34, 5200.5),
        (2, "bob", "Paris", 27, 3100.0),
        (3, "Carol", "Berlin", 45, None),
        (4, "Dan", None, 19, 1200.25),
        (5, "Eve", "Paris", 31, 4000.0),
    ],
    ["id", "name", "city", "age", "salary"],
)
t_env.create_temporary_view("people", people)
print(t_env.list_tables())
t_env.sql_query(
    "SELECT id, UPPER(name) AS shout, LOWER(name), CHAR_LENGTH(name) AS len, SUBSTRING(name, 2, 3), "
    "CONCAT(name, '@', city), CAST(age AS STRING) AS age_s, COALESCE(city, 'nowhere') AS place, "
    "ABS(age - 40), MOD(age, 7), CASE WHEN age >= 30 THEN 'senior' ELSE 'junior' END AS grade "
    "FROM people"
).execute().print()
t_env.sql_query("SELECT name, age FROM people WHERE age > 25 AND city = 'Berlin'").execute().print()
t_env.sql_query("SELECT * FROM people WHERE city IS NULL OR salary IS NULL").execute().print()
t_env.sql_query(
    "SELECT city, COUNT(*) AS n, SUM(age) AS ages, MIN(name), MAX(salary), AVG(age) AS avg_age "
    "FROM people GROUP BY city"
).execute().print()
t_env.sql_query(
    "SELECT city, COUNT(*) AS n FROM people WHERE city IS NOT NULL GROUP BY city HAVING COUNT(*) > 1"
).execute().print()
t_env.sql_query("SELECT COUNT(DISTINCT city) AS cities, COUNT(city) AS known FROM people").execute().print()
t_env.sql_query("SELECT DISTINCT city FROM people").execute().print()
t_env.sql_query(
    "SELECT id, name FROM people WHERE id <= 2 UNION ALL SELECT id, city FROM people WHERE id = 5"
).execute().print()
t_env.sql_query("SELECT age / 2, salary / 2, age * 1.5, age BETWEEN 20 AND 32 FROM people").execute().print()
print(t_env.sql_query("SELECT name, age + 1 AS next_age FROM people").get_schema())
