"""Local brokers provisioned by the project for tests, demos and the conformance suite."""
