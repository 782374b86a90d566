"""Broker adapters (installed as jmspy.adapters)."""
