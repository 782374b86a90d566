"""Broker settings the conformance checks and the broker tests rely on.

``ARTEMIS_TEST_ADDRESS_SETTINGS`` are lines for Artemis's ``etc/broker.properties`` (applied
on top of ``broker.xml`` at start). Each queue-name prefix gets its own behaviour (redelivery
delays and limits, dead-letter resources, no auto-creation) so a check or a test chooses it by
the name of its queue. The suite passes them when it provisions
Artemis itself; ``tests/conftest.py`` starts the session's Artemis with the same tuple.
Against a broker the suite did not start, the checks that need them are not applicable.
"""

from __future__ import annotations

__all__ = [
    "ARTEMIS_TEST_ADDRESS_SETTINGS",
    "DEAD_LETTER_QUEUE",
    "RD_DELAY_PREFIX",
    "RD_CAV_PREFIX",
    "RD_DLA_PREFIX",
    "NO_AUTO_CREATE_PREFIX",
    "RD_LIMIT2_PREFIX",
    "RD_LIMIT3_PREFIX",
]

#: Delay 400 ms, multiplier 2, capped at 1000 ms; 4 attempts, then the DLQ queue.
RD_DELAY_PREFIX = "jmspy.rd.delay."
#: Collision avoidance: delay 400 ms +- 50 %, unlimited attempts.
RD_CAV_PREFIX = "jmspy.rd.cav."
#: 3 attempts, then auto-created dead-letter resources: ``DLA::DLQ.<address>``.
RD_DLA_PREFIX = "jmspy.rd.dla."
#: Queues with a broker-side attempt limit of 2 (3) where a client limit needs one to
#: dead-letter (Qpid Broker-J moves a message to the queue's alternate binding only at the
#: queue's maximumDeliveryAttempts): the Broker-J the suite provisions auto-creates them with
#: that limit and the alternate binding DLQ. Ordinary queues on other brokers.
RD_LIMIT2_PREFIX = "jmspy.rd.limit2."
RD_LIMIT3_PREFIX = "jmspy.rd.limit3."
#: Addresses the broker never auto-creates: a send there is refused (amqp:not-found).
NO_AUTO_CREATE_PREFIX = "jmspy.noauto."
#: Where a default Artemis instance (and the DLQ settings above) put dead letters.
DEAD_LETTER_QUEUE = "DLQ"

ARTEMIS_TEST_ADDRESS_SETTINGS: tuple[str, ...] = (
    # Delay 400 ms, multiplier 2, capped at 1000 ms; 4 attempts, then the DLQ queue.
    'addressSettings."jmspy.rd.delay.#".redeliveryDelay=400',
    'addressSettings."jmspy.rd.delay.#".redeliveryMultiplier=2.0',
    'addressSettings."jmspy.rd.delay.#".maxRedeliveryDelay=1000',
    'addressSettings."jmspy.rd.delay.#".maxDeliveryAttempts=4',
    'addressSettings."jmspy.rd.delay.#".deadLetterAddress=DLQ',
    # Collision avoidance: delay 400 ms +- 50 %.
    'addressSettings."jmspy.rd.cav.#".redeliveryDelay=400',
    'addressSettings."jmspy.rd.cav.#".redeliveryCollisionAvoidanceFactor=0.5',
    'addressSettings."jmspy.rd.cav.#".maxDeliveryAttempts=-1',
    # 3 attempts, then auto-created dead-letter resources: DLA::DLQ.<address>.
    'addressSettings."jmspy.rd.dla.#".maxDeliveryAttempts=3',
    'addressSettings."jmspy.rd.dla.#".deadLetterAddress=DLA',
    'addressSettings."jmspy.rd.dla.#".autoCreateDeadLetterResources=true',
    'addressSettings."jmspy.rd.dla.#".autoCreateAddresses=true',
    # Never auto-created: sends to a missing jmspy.noauto.* address are refused.
    'addressSettings."jmspy.noauto.#".autoCreateAddresses=false',
    'addressSettings."jmspy.noauto.#".autoCreateQueues=false',
)
