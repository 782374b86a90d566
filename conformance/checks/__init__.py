"""The check functions, one module per rule family; importing this package registers them."""

from . import (  # noqa: F401
    batch,
    delivery_delay,
    failover,
    jms_api,
    jms_api_send_receive,
    redelivery,
    security,
    selectors,
    wire,
    wire_settlement,
)
