"""Conformance suite and broker provisioning (installed as jmspy.conformance)."""
