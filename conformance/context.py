"""What a check runs against: the broker target, its probed capabilities, and helpers.

A :class:`CheckContext` is made for every check run. It hands out connection factories for the
broker (with the adapter chosen on the command line), unique destination names, the broker's
address form of a destination, and a bare python-qpid-proton client (:mod:`.raw`); everything a
check opens through it is closed when the check ends.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

from jmspy.adapters import PROFILES, BrokerProfile, detect_profile
from jmspy.adapters.base import DELAYED_DELIVERY
from pydantic import BaseModel, ConfigDict, Field

import jmspy
from jmspy.options import shown_url

from .model import CapabilityReport, CheckFailure, Verdict, deviation, passed
from .raw import RawClient, RawMessage, parse_sections, payload_from_trace
from .settings import DEAD_LETTER_QUEUE, NO_AUTO_CREATE_PREFIX, RD_LIMIT2_PREFIX, RD_LIMIT3_PREFIX

__all__ = ["CAPABILITIES", "CheckContext", "Target", "probe_capabilities"]

#: The capability vocabulary of the catalogue: what a rule's scenario may need from a broker.
CAPABILITIES: dict[str, str] = {
    "DELAYED_DELIVERY": "the broker delays delivery (offered on the connection, or the adapter "
    "says so)",
    "amqp:local-transactions": "the broker's transaction coordinator accepts local transactions",
    "selectors": "the broker filters consumers by JMS selector",
    "priority-ordering": "the broker orders a queue's backlog by priority",
    "broker-redelivery": "the broker counts failed deliveries (modified(delivery-failed) raises "
    "header.delivery-count)",
    "redelivery-address-settings": "the broker runs with the suite's redelivery address settings "
    "(only when the suite provisioned Artemis itself)",
    "dead-letter-queue": "the suite knows where the broker puts dead letters and can read them "
    "back by selector (Artemis: DLQ)",
    "sole-connection-for-container": "the broker refuses a second connection with the same "
    "client id",
    "refused-destination": "the broker refuses sends to a missing address under jmspy.noauto. "
    "(Artemis started with the suite's address settings; probed)",
    "broker-restart": "the suite started the broker itself and can crash it (kill -9) and restart "
    "it on the same data and port",
    "fault-proxy": "the broker listens on a loopback address, so the suite can put its fault "
    "proxy between client and broker",
    "durable-subscriptions": "the broker keeps durable topic subscriptions (adapter)",
}

T = TypeVar("T")


class Target(BaseModel):
    """One broker to run against: where it is and how the suite got it."""

    label: str
    kind: str
    # Neither the URL (its query may carry jms.password) nor the password is in the repr,
    # a dump or a validation error.
    model_config = ConfigDict(hide_input_in_errors=True)

    url: str = Field(repr=False)
    username: str | None = None
    password: str | None = Field(default=None, repr=False, exclude=True)
    adapter: str | None = None  # jmspy.adapter for every factory; None: detected
    version: str = ""
    source: str = "external"  # provisioned | external | container
    address_settings: bool = False  # started with ARTEMIS_TEST_ADDRESS_SETTINGS
    # The provisioned broker (LocalBroker: kill(), restart()), for the checks that crash it;
    # None for a broker the suite did not start. Never part of a report.
    broker: Any = Field(default=None, exclude=True, repr=False)

    def public_url(self) -> str:
        """The URL without credentials or query (safe for reports)."""
        return shown_url(self.url)


def probe_capabilities(target: Target) -> tuple[CapabilityReport, dict[str, Any]]:
    """Connect once and decide which catalogue capabilities the broker has, each with why.

    Returns the capabilities and facts for the report (product, version, adapter, offered).
    Raises jmspy.JMSException when the broker cannot be reached.
    """
    factory = _factory(target, connect_timeout=10000, request_timeout=10000)
    report = CapabilityReport()
    facts: dict[str, Any] = {}
    with factory.createConnection() as connection:
        meta = connection.getMetaData()
        offered = sorted(meta.getOfferedCapabilities())
        product = meta.getBrokerProduct() or ""
        facts.update(
            product=product,
            version=meta.getBrokerVersion() or "",
            adapter=meta.getAdapter(),
            offered=offered,
        )
        profile: BrokerProfile = PROFILES[meta.getAdapter()]
        is_artemis = detect_profile({"product": product}, offered).name == "artemis"

        def mark(name: str, present: bool, why: str) -> None:
            (report.present if present else report.missing)[name] = why

        on_link = _link_offers_delay(target, profile, offered)
        if profile.supports_delayed_delivery(offered):
            why = (
                "DELAYED_DELIVERY offered on the connection"
                if "DELAYED_DELIVERY" in offered
                else f"adapter {profile.name} says the broker delays delivery"
            )
            mark("DELAYED_DELIVERY", True, why)
        elif on_link:
            mark("DELAYED_DELIVERY", True, on_link)
        else:
            why = (
                f"adapter {profile.name} says the broker has no delayed delivery"
                if profile.delay_form == "unsupported" or profile.delay_supported is False
                else "the broker offers no DELAYED_DELIVERY capability"
            )
            mark("DELAYED_DELIVERY", False, why)
        if not profile.transactions:
            mark(
                "amqp:local-transactions",
                False,
                f"adapter {profile.name} says the broker has no transaction coordinator",
            )
        else:
            try:
                connection.createSession(jmspy.SESSION_TRANSACTED).close()
                mark("amqp:local-transactions", True, "a transaction was declared and discharged")
            except jmspy.JMSException as exc:
                mark("amqp:local-transactions", False, f"declaring a transaction failed: {exc}")
        mark(
            "selectors",
            profile.filters_selectors,
            f"adapter {profile.name}: "
            + ("the broker filters by selector" if profile.filters_selectors else "no selectors"),
        )
        mark(
            "priority-ordering",
            profile.orders_by_priority,
            f"adapter {profile.name}: "
            + (
                "the broker orders queues by priority"
                if profile.orders_by_priority
                else "priority ordering unknown"
            ),
        )
        mark(
            "broker-redelivery",
            not profile.client_redelivery,
            f"adapter {profile.name}: "
            + (
                "the client holds and counts failed deliveries itself"
                if profile.client_redelivery
                else "the broker counts failed deliveries"
            ),
        )
        mark(
            "redelivery-address-settings",
            target.address_settings,
            "started by the suite with the jmspy.rd.* address settings"
            if target.address_settings
            else f"adapter {profile.name}: the broker has no redelivery delay settings for AMQP "
            "consumers (it redelivers at once; a delay or limit is jmspy's client policy's)"
            if not profile.broker_redelivery_delay
            else "the suite did not start this broker, so its address settings are unknown",
        )
        if is_artemis:
            mark(
                "dead-letter-queue",
                True,
                "Artemis: rejected and exhausted messages go to DLQ (default address settings)",
            )
        elif profile.name == "qpid_broker_j":
            _mark_broker_j_dead_letters(target, mark)
        elif profile.dead_letter_queue is not None:
            mark(
                "dead-letter-queue",
                True,
                f"adapter {profile.name}: "
                + ("jmspy forwards exhausted" if profile.forward_dead_letters else "rejected")
                + f" messages to {profile.dead_letter_queue}",
            )
        else:
            mark(
                "dead-letter-queue",
                False,
                "the suite does not know where this broker keeps dead letters",
            )
        mark(
            "sole-connection-for-container",
            "sole-connection-for-container" in offered,
            "offered on the connection"
            if "sole-connection-for-container" in offered
            else "not offered on the connection",
        )
        _mark_failover(target, profile, mark)
        probe = f"{NO_AUTO_CREATE_PREFIX}probe.{uuid.uuid4().hex[:8]}"
        try:
            session = connection.createSession()
            session.createProducer(session.createQueue(probe)).close()
            mark("refused-destination", False, f"a producer for {probe} was accepted")
        except jmspy.InvalidDestinationException as exc:
            mark("refused-destination", True, f"the broker refused {probe}: {exc}")
        except jmspy.JMSException as exc:
            mark("refused-destination", False, f"probing {probe} failed: {exc}")
    return report, facts


def _mark_broker_j_dead_letters(target: Target, mark: Callable[[str, bool, str], None]) -> None:
    """Broker-J moves a message to its queue's alternate binding only when the queue's
    maximumDeliveryAttempts is reached (no outcome dead-letters by itself); the suite knows
    both only for the Broker-J it configured (jmspy.conformance.brokers.qpid_broker_j)."""
    if target.kind == "qpid-broker-j" and target.source == "provisioned":
        mark(
            "dead-letter-queue",
            True,
            "Broker-J started by the suite: every queue's alternate binding is DLQ, and "
            f"{RD_LIMIT2_PREFIX}* and {RD_LIMIT3_PREFIX}* queues have maximumDeliveryAttempts "
            "2 and 3",
        )
    else:
        mark(
            "dead-letter-queue",
            False,
            "Broker-J dead-letters only at each queue's maximumDeliveryAttempts, into the "
            "queue's alternate binding; the suite did not configure this broker's queues",
        )


def _link_offers_delay(target: Target, profile: BrokerProfile, offered: Sequence[str]) -> str:
    """Why delayed delivery is there per sending link, or "" when it is not: some brokers
    (Qpid Broker-J) offer DELAYED_DELIVERY in the target capabilities of each sending link's
    attach instead of on the connection, and jmspy's producers look there (rule DD-1)."""
    if DELAYED_DELIVERY in offered or profile.delay_form == "unsupported":
        return ""
    if profile.delay_supported is False:
        return ""
    address = f"{profile.queue_prefix}jmspy.cf.probe.delay.{uuid.uuid4().hex[:8]}"
    try:
        # A bare client (PLAIN): a broker that refuses it simply shows no link capability.
        client = RawClient(target.url, target.username, target.password)
    except Exception:
        return ""
    try:
        capabilities = client.target_capabilities(address)
    except Exception:
        return ""
    finally:
        client.close()
    if DELAYED_DELIVERY not in capabilities:
        return ""
    return (
        f"DELAYED_DELIVERY offered on a sending link's target (attach to {address}: "
        f"{', '.join(capabilities)}), not on the connection"
    )


def _mark_failover(
    target: Target, profile: BrokerProfile, mark: Callable[[str, bool, str], None]
) -> None:
    """The capabilities the FO checks need: a broker to crash, a loopback address for the
    fault proxy, durable subscriptions."""
    broker = target.broker
    restartable = callable(getattr(broker, "kill", None)) and callable(
        getattr(broker, "restart", None)
    )
    if restartable:
        mark("broker-restart", True, f"the suite started {target.kind} as a local process")
    elif broker is not None:
        mark(
            "broker-restart", False, f"the suite cannot crash and restart a {target.source} broker"
        )
    else:
        mark(
            "broker-restart",
            False,
            "the suite did not start this broker, so it cannot crash and restart it",
        )
    host = urlsplit(target.url).hostname or ""
    mark(
        "fault-proxy",
        host in ("127.0.0.1", "localhost"),
        f"the broker is on {host or 'an unknown host'}"
        + (" (loopback)" if host in ("127.0.0.1", "localhost") else ", not 127.0.0.1"),
    )
    mark(
        "durable-subscriptions",
        profile.durable_subscriptions,
        f"adapter {profile.name}: "
        + (
            "durable subscriptions" if profile.durable_subscriptions else "no durable subscriptions"
        ),
    )


def _factory(target: Target, **options: Any) -> jmspy.ConnectionFactory:
    if target.adapter:
        options.setdefault("adapter", target.adapter)
    options.setdefault("connect_timeout", 10000)
    options.setdefault("close_timeout", 5000)
    options.setdefault("request_timeout", 10000)
    options.setdefault("send_timeout", 10000)
    return jmspy.ConnectionFactory(target.url, target.username, target.password, **options)


class CheckContext:
    """Everything one check needs; closes what it opened in :meth:`close`."""

    def __init__(
        self,
        target: Target,
        capabilities: CapabilityReport,
        check_id: str,
        profile: BrokerProfile | None = None,
    ) -> None:
        self.target = target
        self.capabilities = capabilities
        self.check_id = check_id
        self.profile = profile or PROFILES.get(target.adapter or "", PROFILES["generic"])
        self.evidence: list[str] = []
        self._closers: list[Callable[[], None]] = []
        self._slug = re.sub(r"[^a-z0-9]+", "", check_id.lower())
        self._names = 0
        self._frames: list[str] | None = None
        self.deviations: list[tuple[str, str, str]] = []

    # ---- broker ------------------------------------------------------------------------

    def has(self, capability: str) -> bool:
        return self.capabilities.has(capability)

    def factory(self, **options: Any) -> jmspy.ConnectionFactory:
        """A ConnectionFactory for the broker (the chosen adapter, short timeouts)."""
        return _factory(self.target, **options)

    # Connections and contexts are handed out as Any: checks call the JMS API with wrong
    # values on purpose (None, "5", True) and read messages whose type they just asserted, so
    # static types of the API would only get in their way.

    def connection(self, **options: Any) -> Any:
        """A new connection, closed when the check ends."""
        connection = self.factory(**options).createConnection()
        self._closers.append(connection.close)
        return connection

    def context(self, *args: Any, **options: Any) -> Any:
        """A new JMSContext, closed when the check ends."""
        ctx = self.factory(**options).createContext(*args)
        self._closers.append(ctx.close)
        return ctx

    def traced_connection(self, **options: Any) -> Any:
        """A connection whose outgoing frames are recorded (``amqp.traceFrames``), so a wire
        check can tell what jmspy sent from what the broker delivered."""
        if self._frames is None:
            self._frames = []
            frames = self._frames

            class Capture(logging.Handler):
                def emit(self, record: logging.LogRecord) -> None:
                    frames.append(record.getMessage())

            logger = logging.getLogger("jmspy.frames")
            handler = Capture(logging.DEBUG)
            saved = (logger.level, logger.propagate)
            logger.setLevel(logging.DEBUG)
            logger.propagate = False
            logger.addHandler(handler)

            def restore() -> None:
                logger.removeHandler(handler)
                logger.setLevel(saved[0])
                logger.propagate = saved[1]

            self._closers.insert(0, restore)
        return self.connection(**{"amqp.traceFrames": True, **options})

    def sent_messages(self) -> list[RawMessage | None]:
        """Every message the traced connections sent so far, in order (None where the trace
        cannot give the exact bytes, e.g. a payload too large for it)."""
        out: list[RawMessage | None] = []
        for line in list(self._frames or []):
            if "-> @transfer" not in line:
                continue
            payload = payload_from_trace(line)
            out.append(None if payload is None else parse_sections(payload))
        return out

    def expect_wire(
        self,
        what: str,
        extract: Callable[[Sequence[RawMessage]], Any],
        received: Sequence[RawMessage],
        sent: Sequence[RawMessage | None],
        expected: Any,
    ) -> None:
        """Compare what the broker delivered with the expectation; on a mismatch, look at what
        jmspy itself wrote: right there means the broker changed it (a deviation, recorded),
        wrong there is a failure."""
        observed = extract(received)
        if observed == expected:
            return
        if len(sent) != len(received) or any(m is None for m in sent):
            raise CheckFailure(
                f"{what}: delivered {_text(observed)} (what jmspy sent was not captured)",
                f"{what}: {_text(expected)}",
            )
        by_client = extract([m for m in sent if m is not None])
        if by_client != expected:
            self.note(f"delivered by the broker: {_text(observed)}")
            raise CheckFailure(f"{what}: jmspy sent {_text(by_client)}", f"{_text(expected)}")
        self.deviations.append((what, _text(observed), _text(expected)))
        self.note(
            f"{what}: jmspy sent {_text(by_client)} as expected; the broker delivered "
            f"{_text(observed)}"
        )

    def verdict(self, summary: str) -> Verdict:
        """Passed, or a broker deviation when :meth:`expect_wire` recorded any."""
        if not self.deviations:
            return passed(summary)
        whats = "; ".join(d[0] for d in self.deviations)
        return deviation(
            f"jmspy sent the expected mapping but the broker altered it ({whats})",
            observed="; ".join(f"{w}: {o}" for w, o, _ in self.deviations),
            expected="; ".join(f"{w}: {e}" for w, _, e in self.deviations),
        )

    def received_messages(self) -> list[RawMessage | None]:
        """Every message the traced connections received so far, in arrival order."""
        out: list[RawMessage | None] = []
        for line in list(self._frames or []):
            if "<- @transfer" not in line:
                continue
            payload = payload_from_trace(line.replace("<- @transfer", "-> @transfer", 1))
            out.append(None if payload is None else parse_sections(payload))
        return out

    def frames_sent(self, fragment: str) -> list[str]:
        """The outgoing frames of the traced connections that contain ``fragment``."""
        return [line for line in list(self._frames or []) if " -> " in line and fragment in line]

    def broker_deviation(self, summary: str, *, observed: str, expected: str) -> Verdict:
        """The broker, not jmspy, departs from the rule: jmspy's part was checked on the wire
        (what it sent is in the notes, which the report shows as the evidence)."""
        return deviation(summary, observed=observed, expected=expected)

    @property
    def dead_letter_queue(self) -> str:
        """Where the broker keeps dead letters (the adapter's word; Artemis: DLQ)."""
        return self.profile.dead_letter_queue or DEAD_LETTER_QUEUE

    def raw(self) -> RawClient:
        """A bare AMQP client on the broker, closed when the check ends."""
        client = RawClient(self.target.url, self.target.username, self.target.password)
        self._closers.append(client.close)
        return client

    def name(self, tag: str = "q", prefix: str = "jmspy.cf.") -> str:
        """A destination name no other check or earlier run uses."""
        self._names += 1
        return f"{prefix}{self._slug}.{tag}{self._names}.{uuid.uuid4().hex[:8]}"

    def address(self, destination: jmspy.Destination) -> str:
        """The broker's address for a destination (the adapter's prefixes applied)."""
        if destination.is_topic:
            return f"{self.profile.topic_prefix}{destination.getTopicName()}"  # type: ignore[attr-defined]
        return f"{self.profile.queue_prefix}{destination.name}"

    def on_close(self, closer: Callable[[], None]) -> None:
        self._closers.append(closer)

    def close(self) -> None:
        while self._closers:
            closer = self._closers.pop()
            with contextlib.suppress(Exception):
                closer()

    # ---- observations ----------------------------------------------------------------------

    def note(self, line: str) -> None:
        """Evidence kept with the result whatever the outcome."""
        self.evidence.append(line)

    def expect(self, condition: bool, observed: Any, expected: Any, what: str = "") -> None:
        if not condition:
            prefix = f"{what}: " if what else ""
            raise CheckFailure(f"{prefix}{_text(observed)}", f"{prefix}{_text(expected)}")

    def expect_equal(self, observed: Any, expected: Any, what: str) -> None:
        self.expect(observed == expected, observed, expected, what)

    def expect_raises(
        self,
        exception: type[BaseException] | tuple[type[BaseException], ...],
        call: Callable[[], Any],
        what: str,
        *,
        rule_id: str | None = None,
        error_code: str | None = None,
        contains: str | None = None,
    ) -> BaseException:
        """Run ``call``; it must raise ``exception`` (with the rule id / error code given)."""
        names = (
            " or ".join(e.__name__ for e in exception)
            if isinstance(exception, tuple)
            else exception.__name__
        )
        expected = names + (f" with rule {rule_id}" if rule_id else "")
        expected += f" and error code {error_code}" if error_code else ""
        try:
            result = call()
        except exception as exc:
            observed = f"{type(exc).__name__}: {exc}"
            if rule_id is not None and getattr(exc, "rule_id", None) != rule_id:
                raise CheckFailure(f"{what}: {observed} (rule {exc.rule_id})", expected) from exc  # type: ignore[attr-defined]
            if error_code is not None and getattr(exc, "error_code", None) != error_code:
                raise CheckFailure(
                    f"{what}: {observed} (error code {getattr(exc, 'error_code', None)})",
                    expected,
                ) from exc
            if contains is not None and contains not in str(exc):
                raise CheckFailure(
                    f"{what}: {observed}", f"{expected} naming {contains!r}"
                ) from exc
            self.note(f"{what}: {observed}")
            return exc
        except Exception as exc:
            raise CheckFailure(f"{what}: {type(exc).__name__}: {exc}", expected) from exc
        raise CheckFailure(f"{what}: returned {_text(result)} without raising", expected)

    def wait_for(self, condition: Callable[[], bool], timeout: float, step: float = 0.01) -> bool:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() >= deadline:
                return condition()
            time.sleep(step)
        return True

    @contextlib.contextmanager
    def timed(self) -> Iterator[Callable[[], float]]:
        started = time.monotonic()
        yield lambda: time.monotonic() - started


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 300 else text[:297] + "..."


def now_ms() -> int:
    return time.time_ns() // 1_000_000
