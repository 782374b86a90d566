"""The simplified API's exception rule: runtime exceptions instead of checked ones (JMS 2.0).

Shared by JMSContext, JMSProducer and JMSConsumer, each in its own module.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import JMSException, to_runtime

__all__ = ["runtime"]

F = TypeVar("F", bound=Callable[..., Any])


def runtime(method: F) -> F:
    """Raise the runtime twin of any checked JMS exception, as the simplified API must."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except JMSException as exc:
            raise to_runtime(exc) from exc

    return wrapper  # type: ignore[return-value]
