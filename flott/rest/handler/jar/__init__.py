"""Flink's /jars routes for Python programs: upload, list, plan, run, delete (planned in a child process)."""
