"""Handlers of ``/taskmanagers`` (Flink: TaskManagersHandler, TaskManagerDetailsHandler, metrics)."""
