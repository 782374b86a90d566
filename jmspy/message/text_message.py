"""TextMessage: a body of one string (an AMQP string amqp-value on the wire)."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from jmspy._twins.message_text_message import TextMessageTwins
from jmspy.errors import (
    MessageFormatException,
)
from jmspy.message.base import Message, _assignable

__all__ = ["TextMessage"]


_T = TypeVar("_T")


class TextMessage(Message, TextMessageTwins):
    """A message whose body is a string (``jakarta.jms.TextMessage``).

    On the wire the body is an ``amqp-value`` string section (rule WM-12).
    """

    jms_msg_type: ClassVar[int] = 5
    _text: str | None = None

    def __init__(self, text: str | None = None) -> None:
        if text is not None:
            self.setText(text)

    def setText(self, text: str | None) -> None:
        """Set the body text (None: no body).

        Raises MessageNotWriteableException when the body is read-only and MessageFormatException
        unless ``text`` is a str or None.
        """
        self._check_body_writeable()
        if text is not None and not isinstance(text, str):
            raise MessageFormatException(
                f"TextMessage text must be a str, not {type(text).__name__}"
            )
        self._text = text

    def getText(self) -> str | None:
        """The body text, or None."""
        return self._text

    def clearBody(self) -> None:
        """Remove the text and make the body writeable again."""
        self._text = None
        self._read_only_body = False

    def _has_body(self) -> bool:
        return self._text is not None

    def _body_value(self) -> Any:
        return self._text

    def _body_assignable(self, cls: type) -> bool:
        return _assignable(str, cls)
