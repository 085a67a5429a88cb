"""Failover: restart strategies (whether and when a failed job restarts)."""
