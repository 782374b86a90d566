"""ObjectMessage: one Python object, pickled, or an AMQP value (typed encoding)."""

from __future__ import annotations

import pickle
from typing import Any, ClassVar, TypeVar, cast

from jmspy._twins.message_object_message import ObjectMessageTwins
from jmspy.errors import (
    MessageFormatException,
)
from jmspy.message.base import Message, _cls_name
from jmspy.message.java import (
    _BOOLEAN,
    _deep_copy,
)
from jmspy.message.names import (
    JAVA_SERIALIZED_CONTENT_TYPE,
    JMS_AMQP_TYPED_ENCODING,
    PYTHON_SERIALIZED_CONTENT_TYPE,
)
from jmspy.message.pickle_policy import _DEFAULT_POLICY, DeserializationPolicy, _PolicyUnpickler

__all__ = ["ObjectMessage"]


_T = TypeVar("_T")


class ObjectMessage(Message, ObjectMessageTwins):
    """A message whose body is one Python object, pickled when set.

    The object is pickled (protocol 5) by :meth:`setObject`, so later changes to it do not
    affect the message, and unpickled by :meth:`getObject` under the message's
    :class:`DeserializationPolicy`. A body received as an AMQP value (typed encoding, or from a
    non-JMS producer) is returned as decoded. A Java-serialized body cannot be read.
    """

    jms_msg_type: ClassVar[int] = 1
    _accepts_typed_encoding: ClassVar[bool] = True
    _serialized: bytes | None = None
    _content_type: str | None = None
    # Typed (AMQP value) body: _has_typed distinguishes a typed None from no body.
    _typed: Any = None
    _has_typed: bool = False
    _policy: DeserializationPolicy = _DEFAULT_POLICY

    def __init__(self, obj: Any = None) -> None:
        if obj is not None:
            self.setObject(obj)

    def setObject(self, obj: Any) -> None:
        """Set the body to ``obj``, pickled now (protocol 5); None removes the body.

        Later changes to ``obj`` do not reach the message. Raises MessageNotWriteableException when
        the body is read-only and MessageFormatException (linking the cause) when ``obj`` cannot be
        pickled.
        """
        self._check_body_writeable()
        self._typed = None
        self._has_typed = False
        if obj is None:
            self._serialized = None
            self._content_type = None
            return
        try:
            self._serialized = pickle.dumps(obj, protocol=5)
        except Exception as exc:  # pickling user objects can fail in many ways
            raise MessageFormatException(
                f"Cannot serialize object of type {type(obj).__name__}: {exc}", linked=exc
            ) from exc
        self._content_type = PYTHON_SERIALIZED_CONTENT_TYPE

    def getObject(self) -> Any:
        """The body object, or None without a body.

        A pickled body is unpickled afresh on each call; a typed body is a copy of the decoded AMQP
        value. Raises MessageFormatException for a Java-serialized body or another content type (use
        :meth:`getSerializedBytes`), for a class the DeserializationPolicy does not allow (rule
        SEC-5), or when unpickling fails.
        """
        if self._has_typed:
            return _deep_copy(self._typed)
        data = self._serialized
        if data is None:
            return None
        ctype = self._content_type
        if ctype == JAVA_SERIALIZED_CONTENT_TYPE:
            raise MessageFormatException(
                "ObjectMessage body is a Java serialized object "
                f"({JAVA_SERIALIZED_CONTENT_TYPE}) and cannot be deserialized in Python; "
                "use getSerializedBytes() for the raw bytes"
            )
        if ctype != PYTHON_SERIALIZED_CONTENT_TYPE:
            raise MessageFormatException(
                f"ObjectMessage body has content type {ctype!r}, not "
                f"{PYTHON_SERIALIZED_CONTENT_TYPE}; use getSerializedBytes() for the raw bytes"
            )
        try:
            return _PolicyUnpickler(data, self._policy).load()
        except MessageFormatException:
            raise
        except Exception as exc:
            raise MessageFormatException(
                f"Failed to deserialize ObjectMessage body: {exc}", linked=exc
            ) from exc

    def getSerializedBytes(self) -> bytes | None:
        """The raw serialized body (pickle or Java serialization); None for a typed body."""
        return self._serialized

    def set_deserialization_policy(self, policy: DeserializationPolicy | None) -> None:
        """Provider surface: the policy :meth:`getObject` unpickles under.

        None restores the default, which allows no class.
        """
        self._policy = _DEFAULT_POLICY if policy is None else policy

    def get_serialized_body(self) -> tuple[bytes | None, str | None]:
        """The serialized body and its content type (None, None for a typed or absent body)."""
        return self._serialized, self._content_type

    def has_typed_body(self) -> bool:
        """True when the body is an AMQP value (typed encoding) rather than serialized bytes."""
        return self._has_typed

    def set_serialized_body(self, data: bytes, content_type: str | None) -> None:
        """Provider surface: install serialized body bytes with their content type.

        A typed body is replaced.
        """
        self._serialized = data
        self._content_type = content_type
        self._typed = None
        self._has_typed = False

    def set_typed_body(self, value: Any) -> None:
        """Provider surface: make ``value`` the body, sent as an AMQP value (typed encoding)."""
        self._serialized = None
        self._content_type = None
        self._typed = value
        self._has_typed = True

    def set_received_typed_body(self, value: Any) -> None:
        """Install a received amqp-value or amqp-sequence body.

        Such a body is what JMS_AMQP_TYPED_ENCODING produces, and Qpid JMS reports the property
        as true on it (its typed-object delegate); so does this message, and sending it on keeps
        the typed encoding. (Qpid JMS also picks that delegate for a data section whose content
        type is not Java serialization; jmspy reads such a section as serialized bytes - its own
        pickled bodies among them - and does not report typed encoding for it.)
        """
        self.set_typed_body(value)
        self.get_property_store()[JMS_AMQP_TYPED_ENCODING] = (_BOOLEAN, True)

    def clearProperties(self) -> None:
        """Remove every property except ``JMS_AMQP_TYPED_ENCODING``.

        The typed encoding belongs to the body, as in Qpid JMS.
        """
        # As in Qpid JMS, the typed encoding belongs to the body's encoding and survives
        # clearProperties (its property intercepter has nothing to clear).
        typed = self.uses_typed_encoding()
        super().clearProperties()
        if typed:
            self.get_property_store()[JMS_AMQP_TYPED_ENCODING] = (_BOOLEAN, True)

    def uses_typed_encoding(self) -> bool:
        """JMS_AMQP_TYPED_ENCODING is set: the body is sent as an AMQP value."""
        props = self._properties
        if not props:
            return False
        tv = props.get(JMS_AMQP_TYPED_ENCODING)
        return tv is not None and bool(tv[1])

    def clearBody(self) -> None:
        """Remove the body and make it writeable again."""
        self._serialized = None
        self._content_type = None
        self._typed = None
        self._has_typed = False
        self._read_only_body = False

    def _has_body(self) -> bool:
        return self._serialized is not None or (self._has_typed and self._typed is not None)

    def getBody(self, cls: type[_T]) -> _T | None:
        """The body object as ``cls`` (JMS 2.0 ``getBody``), or None without a body.

        Raises MessageFormatException when the object is not an instance of ``cls`` or cannot be
        loaded (see :meth:`getObject`).
        """
        if not self._has_body():
            return None
        obj = self.getObject()
        if obj is not None and not _isinstance(obj, cls):
            raise MessageFormatException(
                f"ObjectMessage body of type {type(obj).__name__} cannot be assigned to "
                f"{_cls_name(cls)}"
            )
        return cast("_T | None", obj)

    def isBodyAssignableTo(self, cls: type) -> bool:
        """Whether :meth:`getBody` could return the body as ``cls``.

        False when the body cannot be loaded.
        """
        if not self._has_body():
            return True
        try:
            obj = self.getObject()
        except MessageFormatException:
            return False
        return obj is None or _isinstance(obj, cls)


def _isinstance(obj: Any, cls: Any) -> bool:
    try:
        return isinstance(obj, cls)
    except TypeError:
        return False


# ---------------------------------------------------------------------------------------------
# Body helpers
# ---------------------------------------------------------------------------------------------
