"""The check functions, one module per rule family; importing this package registers them."""

from . import delivery_delay, redelivery  # noqa: F401
