"""SEC-1..SEC-6: TLS verification, SASL mechanisms, max frame size, and client safeguards.

SEC-1..SEC-3 are about the broker (its certificate, its SASL offer, the frames it writes);
SEC-4 and SEC-5 check the client's own safeguards and need the broker only as a transport;
SEC-6 checks the TLS settings the client refuses, and on an amqps:// target which versions
it gets.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import tempfile
import uuid
from typing import Any

import jmspy

from ..context import CheckContext
from ..model import Verdict, not_applicable
from ..registry import check


@check("SEC-1")
def sec1(ctx: CheckContext) -> Verdict:
    if not ctx.target.url.startswith("amqps://"):
        return not_applicable(
            "the target has no TLS acceptor (an amqp:// URL); give an amqps:// URL with "
            "transport.trustStoreLocation to check one",
            missing=("tls-acceptor",),
        )
    connection = ctx.connection()
    connection.createSession()
    ctx.note(f"connected to {ctx.target.public_url()} with verification on")
    try:
        from ..brokers.certs import generate
    except ImportError:  # pragma: no cover - cryptography is a dev dependency
        return ctx.verdict("verified connection (no unrelated CA: 'cryptography' missing)")
    with tempfile.TemporaryDirectory(prefix="jmspy-sec1-") as tmp:
        other_ca = str(generate(tmp).other_ca)

        def connect_with_unrelated_ca() -> None:
            ctx.connection(trust_store_location=other_ca, trust_all=False).createSession()

        ctx.expect_raises(
            jmspy.JMSSecurityException,
            connect_with_unrelated_ca,
            "trusting only an unrelated CA",
            contains="verification failed",
        )
    return ctx.verdict("the certificate verifies for the host and an unrelated CA is refused")


@check("SEC-2")
def sec2(ctx: CheckContext) -> Verdict:
    records: list[str] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    logger = logging.getLogger("jmspy.sasl")
    handler, level = Capture(logging.DEBUG), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        ctx.connection().createSession()
    except jmspy.JMSSecurityException as exc:
        ctx.note(f"login failed: {exc}")
        ctx.expect("server offers" not in str(exc), str(exc), "a mechanism in common")
        raise
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    offers = [r for r in records if "server offers" in r]
    ctx.expect(bool(offers), records, "a SASL exchange (the broker skipped SASL)")
    ctx.note(offers[-1])
    if "PLAIN" in offers[-1].split("using")[0] and not ctx.target.url.startswith("amqps://"):
        ctx.note("PLAIN is offered on a port without TLS: passwords cross the network in clear")
    return ctx.verdict(offers[-1].split(": ", 1)[-1])


@check("SEC-3")
def sec3(ctx: CheckContext) -> Verdict:
    connection = ctx.connection(max_frame_size=512)
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    body = "".join(f"{i:07d}\n" for i in range(1024))  # 8 KiB, position-checkable
    session.createProducer(queue).send(session.createTextMessage(body))
    connection.start()
    received = session.createConsumer(queue).receive(10000)
    ctx.expect(received is not None, "nothing within 10 s", "the 8 KiB message", "receive")
    ctx.expect_equal(received.getText() == body, True, "body intact")
    return ctx.verdict("8 KiB message round trip with a 512-byte maximum frame size")


def _error_texts(exc: BaseException) -> str:
    """An error with everything chained to it, as a traceback would print them."""
    texts: list[str] = []
    current: BaseException | None = exc
    while current is not None:
        texts += [str(current), repr(current)]
        current = current.__cause__ or current.__context__
    return "\n".join(texts)


def _misplaced_secret_urls(secret: str) -> dict[str, str]:
    """URLs holding the password where it does not belong, each refused by the client."""
    head, tail = secret[:6], secret[6:]
    return {
        "user information": f"amqp://user:{secret}@localhost:5672",
        "user information, wrong scheme": f"amqpx://user:{secret}@localhost:5672",
        "'/' in the password": f"amqp://user:{head}/{tail}@localhost",
        "'?' in the password": f"amqp://user:{head}?{tail}@localhost",
        "'#' in the password": f"amqp://user:{head}#{tail}@localhost",
        "jms.password given twice": f"amqp://localhost?jms.password={secret}&jms.password=x",
        "unencoded '&' in jms.password": f"amqp://localhost?jms.password=ab&{secret}",
        "unbalanced failover URL": f"failover:(amqp://localhost?jms.password={secret}",
    }


@check("SEC-4")
def sec4(ctx: CheckContext) -> Verdict:
    secret = f"sec4-{uuid.uuid4().hex}"
    for what, url in _misplaced_secret_urls(secret).items():
        try:
            jmspy.ConnectionFactory(url)
        except jmspy.IllegalArgumentException as exc:
            shown = _error_texts(exc)
            ctx.expect(secret[6:] not in shown, shown, f"a refusal without the password ({what})")
        else:
            ctx.expect(False, "accepted", f"IllegalArgumentException for a URL with {what}")
    factory = jmspy.ConnectionFactory(ctx.target.url, ctx.target.username or "jmspy", secret)
    shown = repr(factory) + repr(factory.options)
    ctx.expect(secret not in shown, shown, "no password in the representations")
    try:
        connection = factory.createConnection()
        ctx.on_close(connection.close)
        connection.createSession()
    except jmspy.JMSSecurityException as exc:
        ctx.expect(secret not in str(exc), str(exc), "an error without the password")
        ctx.note(f"refused login: {exc}")
        return ctx.verdict("password absent from refused URLs, reprs and the login error")
    ctx.note("the broker accepted the made-up password: the login error was not observed")
    return ctx.verdict("password absent from refused URLs and reprs")


@dataclasses.dataclass
class Parcel:
    """A class of the suite's own, pickled into an ObjectMessage by SEC-5."""

    label: str


@check("SEC-5")
def sec5(ctx: CheckContext) -> Verdict:
    class_name = f"{Parcel.__module__}.{Parcel.__qualname__}"

    def round_trip(**options: Any) -> Any:
        connection = ctx.connection(**options)
        session = connection.createSession()
        queue = session.createQueue(ctx.name())
        session.createProducer(queue).send(session.createObjectMessage(Parcel("p")))
        connection.start()
        received = session.createConsumer(queue).receive(10000)
        ctx.expect(received is not None, "nothing within 10 s", "the ObjectMessage", "receive")
        return received

    refused = round_trip()
    ctx.expect_raises(
        jmspy.MessageFormatException,
        refused.getObject,
        "getObject with the default policy",
        contains="jms.deserializationPolicy.allowList",
    )
    allowed = round_trip(deserialization_allow_list=class_name)
    ctx.expect_equal(allowed.getObject(), Parcel("p"), f"getObject with {class_name} allowed")
    return ctx.verdict("no class loads by default; an allowed class does")


@check("SEC-6")
def sec6(ctx: CheckContext) -> Verdict:
    url = ctx.target.url.split("?", 1)[0]
    refusals = {
        "a retired version enabled": ({"enabled_protocols": "TLSv1.1"}, "RFC 8996"),
        "no version left": (
            {"enabled_protocols": "TLSv1.2", "disabled_protocols": "TLSv1.2"},
            "no protocol is left",
        ),
        "an unknown suite": (
            {"enabled_cipher_suites": "TLS_ECDHE_RSA_WITH_ROT13"},
            "is not a cipher suite",
        ),
        "some TLS 1.3 suites but not all": (
            {"disabled_cipher_suites": "TLS_AES_128_GCM_SHA256"},
            "TLS 1.3",
        ),
    }
    for what, (options, contains) in refusals.items():
        ctx.expect_raises(
            jmspy.IllegalArgumentException,
            functools.partial(jmspy.ConnectionFactory, url, **options),
            what,
            contains=contains,
        )
    if not ctx.target.url.startswith("amqps://"):
        return ctx.verdict("settings that cannot be honoured are refused at the factory")
    accepted = []
    for version in ("TLSv1.2", "TLSv1.3"):
        try:
            ctx.connection(enabled_protocols=version).createSession()
            accepted.append(version)
        except jmspy.JMSSecurityException as exc:
            ctx.note(f"{version} only: {exc}")
    ctx.expect(bool(accepted), "neither", "TLSv1.2 or TLSv1.3 accepted by the target")
    return ctx.verdict(
        f"refusals at the factory; the target accepts {' and '.join(accepted)} from this client"
    )
