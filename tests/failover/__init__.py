"""Failover and reconnect tests against brokers that are killed, restarted and proxied."""
