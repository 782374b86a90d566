"""AMQP 1.0 provider: the engine thread and the JMS <-> AMQP codec.

The JMS objects above see this package through :mod:`jmspy._provider` (the ``Provider``
protocols). Inside it, one connection's ``AmqpConnection``, its ``AmqpSession``s, their links
(``links``, ``sender``, ``receiver``, ``transactions``), the transport handler
(``transport_events``) and the ``Reconnector`` (``failover``) are one unit, like a Java
package: they call each other's underscore members (``_do_attach``, ``_on_failed``,
``_proton``, ``_live_gen``, ...) on purpose, all on the engine thread or under the
connection's lock. Nothing outside ``jmspy._amqp`` may do so.
"""
