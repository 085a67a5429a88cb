"""Cluster-wide handlers: dashboard config, overview, shutdown, datasets, the JobManager's own views."""
