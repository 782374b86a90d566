"""What the engine raises: to waiters when it has stopped, and when the peer went silent."""

from __future__ import annotations

__all__ = ["EngineStopped", "IdleTimeoutExpired"]


class EngineStopped(Exception):
    """Raised to waiters when the engine thread is no longer running."""


class IdleTimeoutExpired(TimeoutError):
    """Nothing arrived from the peer for the local idle timeout: the peer is presumed dead."""
