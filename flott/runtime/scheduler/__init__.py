"""Scheduling decisions that are pure functions of the job and what ran (no I/O)."""
