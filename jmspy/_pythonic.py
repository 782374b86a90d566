"""Python conveniences on top of the JMS names, made in this one place.

Every public camelCase method of the API classes gets a snake_case alias
(``createSession`` -> ``create_session``, ``getJMSMessageID`` -> ``get_jms_message_id``,
``receiveNoWait`` -> ``receive_no_wait``). The alias is the same function object, so behaviour,
errors and docstrings are identical. Context managers and iteration live on the classes
themselves (``__enter__``/``__exit__``/``__iter__``) because Python looks them up there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_ACRONYMS = ("JMSX", "JMS", "ID", "UTF")
_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """``getJMSCorrelationIDAsBytes`` -> ``get_jms_correlation_id_as_bytes``."""
    return _BOUNDARY.sub("_", name).lower()


def add_snake_case_aliases(classes: Iterable[type]) -> None:
    for cls in classes:
        for name, value in list(vars(cls).items()):
            if name.startswith("_") or not callable(value) or name == name.lower():
                continue
            alias = snake_case(name)
            if alias != name and alias not in vars(cls):
                setattr(cls, alias, value)
