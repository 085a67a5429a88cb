"""Registering one component at another, with retries (Flink: ``org.apache.flink.runtime.registration``)."""
