"""Heartbeats between the cluster's components (Flink: ``org.apache.flink.runtime.heartbeat``)."""
