"""Streaming contracts (Flink's ``org.apache.flink.streaming.api``); see ``flott.api``."""
