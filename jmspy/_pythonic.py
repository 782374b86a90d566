"""The naming rule from the JMS names to the Python ones.

Every public camelCase method of the API classes has a snake_case twin (``createSession`` ->
``create_session``, ``getJMSMessageID`` -> ``get_jms_message_id``, ``receiveNoWait`` ->
``receive_no_wait``): a real, typed method of a generated mixin (jmspy/_twins/, written by
scripts/gen_twins.py) that calls the camelCase method by name, so a subclass's override of the
camelCase method applies to both names. Context managers and iteration live on the classes
themselves (``__enter__``/``__exit__``/``__iter__``) because Python looks them up there.
"""

from __future__ import annotations

import re

__all__ = ["snake_case"]

_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """``getJMSCorrelationIDAsBytes`` -> ``get_jms_correlation_id_as_bytes``."""
    return _BOUNDARY.sub("_", name).lower()
