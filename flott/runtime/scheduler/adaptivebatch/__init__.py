"""Flink's adaptive batch scheduler: the parallelism of BATCH vertices decided from the data."""
