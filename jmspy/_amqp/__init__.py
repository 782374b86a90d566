"""AMQP 1.0 provider: the engine thread and the JMS <-> AMQP codec.

The JMS objects above see this package through :mod:`jmspy._provider` (the ``Provider``
protocols). Inside it, one connection's ``AmqpConnection``, its ``AmqpSession``s, their links
(``links``, ``sender``, ``receiver`` with ``settlement``, ``transactions``), the transport handler
(``transport_events``) and the ``Reconnector`` (``failover``) are one unit, like a Java
package: they call each other's underscore members (``_do_attach``, ``_on_failed``,
``_proton``, ``_live_gen``, ...) on purpose, all on the engine thread or under the
connection's lock. Nothing outside ``jmspy._amqp`` may do so.
"""

from .._native import prefer_sources

# Before any module of this package is imported: the codec modules built with mypyc are used
# only when they were built from the sources beside them (see jmspy._native).
prefer_sources()
