"""The check functions, one module per rule family; importing this package registers them."""

from . import batch, delivery_delay, jms_api, redelivery, security, wire  # noqa: F401
