"""The execution graph side of a running job: failover and restart decisions."""
