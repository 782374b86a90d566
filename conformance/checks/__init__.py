"""The check functions, one module per rule family; importing this package registers them."""

from . import batch, delivery_delay, failover, jms_api, redelivery, wire  # noqa: F401
