"""AMQP 1.0 provider: the engine thread and the JMS <-> AMQP codec."""
