"""How a transport's end becomes the JMSException the application is given: a connect that
failed told apart from an established connection that was lost, an authentication failure as
a JMSSecurityException, the engine's own failures named after the connection."""

from __future__ import annotations

from proton import Condition

from ..errors import JMSException, JMSSecurityException
from .engine_errors import IdleTimeoutExpired
from .redact import peer_text
from .terms import error_for_condition

__all__ = ["io_failure_text", "transport_error", "engine_failure"]


def io_failure_text(display: str, established: bool, detail: object) -> str:
    """``established``: the connection's open had completed."""
    # A socket error before the open completed means the connect failed; after it, an
    # established connection was lost (a reset mid-stream is not a failure to connect).
    if established:
        return f"connection to {display} was lost: {detail}"
    return f"could not connect to {display}: {detail}"


# Proton's condition when the socket ends (EOF or reset) before the peer's AMQP close: the
# usual end of a broker that crashed or was killed, not malformed input. Said as a lost
# connection, the condition kept as the error code and in the text for searches.
_ABORTED = ("amqp:connection:framing-error", "connection aborted")


def transport_error(display: str, established: bool, cond: Condition | None) -> JMSException:
    """A TRANSPORT_ERROR event's condition."""
    if cond is not None and (str(cond.name), cond.description) == _ABORTED:
        detail = (
            "the peer closed the socket without closing the AMQP connection "
            f"({_ABORTED[0]}: {_ABORTED[1]})"
        )
        return JMSException(io_failure_text(display, established, detail), _ABORTED[0])
    if cond is not None and str(cond.name) in (
        "amqp:unauthorized-access",
        "amqp:sasl:auth",
        "proton:io",
    ):
        if str(cond.name) == "proton:io":
            return JMSException(
                io_failure_text(display, established, peer_text(cond.description)),
                str(cond.name),
            )
        return JMSSecurityException(
            f"authentication failed for {display}: {peer_text(cond.description)}", str(cond.name)
        )
    return error_for_condition(cond, JMSException, f"connection to {display}")


def engine_failure(display: str, established: bool, error: BaseException) -> JMSException:
    """What ended the engine thread."""
    if isinstance(error, JMSException):
        return error
    if isinstance(error, IdleTimeoutExpired):
        return JMSException(f"connection to {display}: {error}", linked=error)
    if isinstance(error, OSError):
        return JMSException(io_failure_text(display, established, error), linked=error)
    return JMSException(f"connection to {display} ended: {error}", linked=error)
