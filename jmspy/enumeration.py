"""``java.util.Enumeration`` for the JMS methods that return one, so Java code that walks them
with ``hasMoreElements()``/``nextElement()`` ports line by line, while Python code iterates.

* :class:`Enumeration`: a snapshot of names (``Message.getPropertyNames()``,
  ``MapMessage.getMapNames()``, ``ConnectionMetaData.getJMSXPropertyNames()``). It is a list,
  as those methods returned before, that also walks itself the Java way.
* :class:`MessageEnumeration`: the messages a ``QueueBrowser`` enumeration produces as they
  arrive from the broker; a one-pass iterator that can be closed early.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from .errors import NoSuchElementException

__all__ = ["Enumeration", "MessageEnumeration"]

T = TypeVar("T")

_EXHAUSTED = "the enumeration has no more elements (hasMoreElements() is false)"


class Enumeration(list[T]):
    """A list that is also a ``java.util.Enumeration`` over its items, in order."""

    __slots__ = ("_next",)

    def __init__(self, items: Iterable[T] = ()) -> None:
        super().__init__(items)
        self._next = 0

    def hasMoreElements(self) -> bool:
        """Whether ``nextElement()`` has an element left to return."""
        return self._next < len(self)

    def nextElement(self) -> T:
        """The next element; NoSuchElementException when there is none left."""
        if self._next >= len(self):
            raise NoSuchElementException(_EXHAUSTED)
        item = self[self._next]
        self._next += 1
        return item

    def has_more_elements(self) -> bool:
        """Snake_case twin of :meth:`hasMoreElements`."""
        return self.hasMoreElements()

    def next_element(self) -> T:
        """Snake_case twin of :meth:`nextElement`."""
        return self.nextElement()


_NOTHING = object()


class MessageEnumeration(Iterator[T], Generic[T]):
    """An iterator that is also a ``java.util.Enumeration``: ``hasMoreElements()`` waits for
    the next element (it may have to ask the broker) and keeps it for ``nextElement()``.
    ``close()`` ends it early and releases what it holds (a browser's link); it ends by itself
    when exhausted. ``with`` closes it too."""

    def __init__(self, source: Iterator[T], release: Callable[[], None]) -> None:
        self._source = source
        self._release = release
        self._ahead: object = _NOTHING
        self._closed = False

    def hasMoreElements(self) -> bool:
        """Whether another element comes; waits for it (within the source's own bounds)."""
        if self._ahead is _NOTHING and not self._closed:
            try:
                self._ahead = next(self._source)
            except StopIteration:
                self.close()
        return self._ahead is not _NOTHING

    def nextElement(self) -> T:
        """The next element; NoSuchElementException when there is none left."""
        if not self.hasMoreElements():
            raise NoSuchElementException(_EXHAUSTED)
        item, self._ahead = self._ahead, _NOTHING
        return item  # type: ignore[return-value]  # an element of the source

    def has_more_elements(self) -> bool:
        """Snake_case twin of :meth:`hasMoreElements`."""
        return self.hasMoreElements()

    def next_element(self) -> T:
        """Snake_case twin of :meth:`nextElement`."""
        return self.nextElement()

    def __next__(self) -> T:
        if not self.hasMoreElements():
            raise StopIteration
        return self.nextElement()

    def close(self) -> None:
        """Stop the enumeration and release what it holds; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._ahead = _NOTHING
        self._release()

    def __enter__(self) -> MessageEnumeration[T]:
        """Enter a ``with`` block; returns this enumeration."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Leave a ``with`` block: :meth:`close` the enumeration."""
        self.close()
