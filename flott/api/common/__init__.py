"""Contracts shared by every floor (Flink's ``org.apache.flink.api.common``); see ``flott.api``."""
