"""Connection options: the URL query in the Qpid JMS style, validated by one pydantic model.

``amqp://host:port?jms.connectTimeout=5000&amqp.idleTimeout=30000&transport.tcpNoDelay=true``

Every option has one dotted name (the Qpid JMS name where Qpid JMS has the option) and one
snake_case name usable as a keyword argument of :class:`jmspy.ConnectionFactory`. An unknown
option is an :class:`~jmspy.errors.IllegalArgumentException` naming it, as in Qpid JMS.

jmspy's defaults differ from Qpid JMS in one deliberate way: every blocking call has a finite
timeout (Qpid JMS waits forever for sends and requests by default), so that no call can hang.
"""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)

from ._amqp.tls_policy import TlsPolicy, TlsPolicyError
from ._amqp.tls_policy import resolve as resolve_tls_policy
from ._limits import (
    JAVA_INT_MAX,
    JAVA_LONG_MAX,
    MAX_TIMEOUT_MS,
    MIN_IDLE_TIMEOUT_MS,
    UINT_MAX,
)
from ._modes import NOT_ACKNOWLEDGED, SESSION_TRANSACTED
from .errors import IllegalArgumentException
from .redelivery import RedeliveryOutcome, RedeliveryPolicy, parse_redelivery_outcome

__all__ = [
    "DEFAULT_PORTS",
    "ConnectionOptions",
    "Endpoint",
    "JavaBool",
    "parse_url",
    "build_options",
]


DEFAULT_PORTS = {"amqp": 5672, "amqps": 5671}


def _java_boolean(value: Any) -> Any:
    """A boolean option's text as Qpid JMS reads it, or an error where it would read it
    differently: Java's ``Boolean.valueOf`` takes "true" in any case as true and any other
    text as false, so "1", "yes" or "on" (true for pydantic) mean false to a Java client given
    the same URL. Refused rather than read either way; non-text values (keyword arguments) are
    left to pydantic."""
    if isinstance(value, str):
        folded = value.lower()
        if folded == "true":
            return True
        if folded == "false":
            return False
        raise ValueError("must be true or false (Qpid JMS reads any other text as false)")
    return value


#: A boolean option: "true" or "false" in any case, as Qpid JMS's URL options.
JavaBool = Annotated[bool, BeforeValidator(_java_boolean)]

# The prefetch fields that jms.prefetchPolicy.all sets (JmsDefaultPrefetchPolicy.setAll).
_PREFETCH_FIELDS = {
    "queue": "queue_prefetch",
    "topic": "topic_prefetch",
    "durable": "durable_topic_prefetch",
    "browser": "queue_browser_prefetch",
}


class ConnectionOptions(BaseModel):
    """All options of a connection; field aliases are the URL names."""

    # hide_input_in_errors: a ValidationError of this public model would quote the input, a
    # password among it.
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, frozen=True, hide_input_in_errors=True
    )

    # --- jms.* (connection level, Qpid JMS names) ---
    username: str | None = Field(None, alias="jms.username")
    password: SecretStr | None = Field(None, alias="jms.password")
    client_id: str | None = Field(None, alias="jms.clientID")
    await_client_id: JavaBool = Field(True, alias="jms.awaitClientID")
    client_id_prefix: str = Field("ID:", alias="jms.clientIDPrefix")
    connection_id_prefix: str = Field("ID:", alias="jms.connectionIDPrefix")
    connect_timeout: int = Field(15000, alias="jms.connectTimeout", gt=0, le=MAX_TIMEOUT_MS)
    close_timeout: int = Field(15000, alias="jms.closeTimeout", gt=0, le=MAX_TIMEOUT_MS)
    send_timeout: int = Field(30000, alias="jms.sendTimeout", gt=0, le=MAX_TIMEOUT_MS)
    request_timeout: int = Field(30000, alias="jms.requestTimeout", gt=0, le=MAX_TIMEOUT_MS)
    force_async_send: JavaBool = Field(False, alias="jms.forceAsyncSend")
    force_sync_send: JavaBool = Field(False, alias="jms.forceSyncSend")
    local_message_expiry: JavaBool = Field(True, alias="jms.localMessageExpiry")
    local_message_priority: JavaBool = Field(False, alias="jms.localMessagePriority")
    validate_property_names: JavaBool = Field(True, alias="jms.validatePropertyNames")
    populate_jmsx_user_id: JavaBool = Field(False, alias="jms.populateJMSXUserID")
    receive_local_only: JavaBool = Field(False, alias="jms.receiveLocalOnly")
    receive_no_wait_local_only: JavaBool = Field(False, alias="jms.receiveNoWaitLocalOnly")
    max_async_sends_in_flight: int = Field(
        2048, alias="jms.maxAsyncSendsInFlight", gt=0, le=JAVA_INT_MAX
    )
    prefetch_all: int | None = Field(None, alias="jms.prefetchPolicy.all", ge=0, le=32767)
    queue_prefetch: int = Field(1000, alias="jms.prefetchPolicy.queuePrefetch", ge=0, le=32767)
    topic_prefetch: int = Field(1000, alias="jms.prefetchPolicy.topicPrefetch", ge=0, le=32767)
    queue_browser_prefetch: int = Field(
        1000, alias="jms.prefetchPolicy.queueBrowserPrefetch", ge=0, le=32767
    )
    durable_topic_prefetch: int = Field(
        1000, alias="jms.prefetchPolicy.durableTopicPrefetch", ge=0, le=32767
    )
    # Qpid JMS's presettle policy (rule WM-17): such consumers attach with snd-settle-mode
    # settled and acknowledge nothing (never in a transacted session); such producers send
    # settled and their sends are done once written. At most once, both.
    presettle_all: JavaBool = Field(False, alias="jms.presettlePolicy.presettleAll")
    presettle_producers: JavaBool = Field(False, alias="jms.presettlePolicy.presettleProducers")
    presettle_topic_producers: JavaBool = Field(
        False, alias="jms.presettlePolicy.presettleTopicProducers"
    )
    presettle_queue_producers: JavaBool = Field(
        False, alias="jms.presettlePolicy.presettleQueueProducers"
    )
    presettle_transacted_producers: JavaBool = Field(
        False, alias="jms.presettlePolicy.presettleTransactedProducers"
    )
    presettle_consumers: JavaBool = Field(False, alias="jms.presettlePolicy.presettleConsumers")
    presettle_queue_consumers: JavaBool = Field(
        False, alias="jms.presettlePolicy.presettleQueueConsumers"
    )
    presettle_topic_consumers: JavaBool = Field(
        False, alias="jms.presettlePolicy.presettleTopicConsumers"
    )
    deserialization_allow_list: str = Field("", alias="jms.deserializationPolicy.allowList")
    deserialization_deny_list: str = Field("", alias="jms.deserializationPolicy.denyList")

    # --- amqp.* ---
    # 0 (off) or MIN_IDLE_TIMEOUT_MS..UINT_MAX (AMQP idle-time-out is a uint of ms).
    idle_timeout: int = Field(60000, alias="amqp.idleTimeout", ge=0, le=UINT_MAX)
    vhost: str | None = Field(None, alias="amqp.vhost")
    sasl_mechanisms: str | None = Field(None, alias="amqp.saslMechanisms")
    max_frame_size: int = Field(1048576, alias="amqp.maxFrameSize", ge=512, le=UINT_MAX)
    drain_timeout: int = Field(60000, alias="amqp.drainTimeout", gt=0, le=MAX_TIMEOUT_MS)
    # Without the broker's anonymous relay an anonymous producer attaches a link per
    # destination: at most this many stay open per producer (0: one link per send), and one
    # unused this long (ms, 0: no limit) is closed at the producer's next send.
    anonymous_fallback_cache_size: int = Field(
        1, alias="amqp.anonymousFallbackCacheSize", ge=0, le=JAVA_INT_MAX
    )
    anonymous_fallback_cache_timeout: int = Field(
        30000, alias="amqp.anonymousFallbackCacheTimeout", ge=0, le=MAX_TIMEOUT_MS
    )
    trace_frames: JavaBool = Field(False, alias="amqp.traceFrames")

    # --- transport.* ---
    tcp_no_delay: JavaBool = Field(True, alias="transport.tcpNoDelay")
    tcp_keep_alive: JavaBool = Field(False, alias="transport.tcpKeepAlive")
    send_buffer_size: int = Field(65536, alias="transport.sendBufferSize", gt=0, le=JAVA_INT_MAX)
    receive_buffer_size: int = Field(
        65536, alias="transport.receiveBufferSize", gt=0, le=JAVA_INT_MAX
    )
    # > 0: connections asking for the same N share a group of N engine threads (event loops)
    # and N listener dispatch threads, instead of an engine thread per connection and a
    # dispatch thread per session (Qpid JMS: -1, unshared).
    shared_event_loop_threads: int = Field(
        -1, alias="transport.sharedEventLoopThreads", ge=-1, le=256
    )
    trust_store_location: str | None = Field(None, alias="transport.trustStoreLocation")
    key_store_location: str | None = Field(None, alias="transport.keyStoreLocation")
    key_store_password: SecretStr | None = Field(None, alias="transport.keyStorePassword")
    # PEM (key and certificate chain in one file) or PKCS12; by default from the file name.
    key_store_type: str | None = Field(None, alias="transport.keyStoreType")
    # The client certificate as two PEM files (jmspy's names; Qpid JMS has key stores only).
    certificate_location: str | None = Field(None, alias="transport.certificateLocation")
    key_location: str | None = Field(None, alias="transport.keyLocation")
    verify_host: JavaBool = Field(True, alias="transport.verifyHost")
    trust_all: JavaBool = Field(False, alias="transport.trustAll")
    # Comma-separated, Java's names (see _amqp/tls_policy.py, rule SEC-6). None: what the
    # context offers (TLSv1.2 and TLSv1.3; Python's secure cipher defaults).
    enabled_protocols: str | None = Field(None, alias="transport.enabledProtocols")
    disabled_protocols: str | None = Field("SSLv2Hello,SSLv3", alias="transport.disabledProtocols")
    enabled_cipher_suites: str | None = Field(None, alias="transport.enabledCipherSuites")
    disabled_cipher_suites: str | None = Field(None, alias="transport.disabledCipherSuites")

    # --- jmspy.* (ours) ---
    # How long receive(timeout) (after its timeout) and receiveNoWait() wait for the broker to
    # answer the drain that fetches what it still holds; amqp.drainTimeout bounds the drains
    # of close and rollback only. A stalled broker cannot hold a receive call longer.
    receive_drain_timeout: int = Field(1000, alias="jmspy.receiveDrainTimeout", gt=0)
    adapter: str | None = Field(None, alias="jmspy.adapter")
    max_delivery_delay: int | None = Field(
        None, alias="jmspy.maxDeliveryDelay", ge=0, le=JAVA_LONG_MAX
    )
    # Stamp the broker's duplicate-detection id (Artemis: _AMQ_DUPL_ID) on every send so a send
    # resent after a reconnect is dropped by the broker. None: on for failover connections to
    # a broker whose adapter names the property.
    duplicate_detection: JavaBool | None = Field(None, alias="jmspy.duplicateDetection")
    # OpenTelemetry spans and W3C trace context in application properties (jmspy.tracing);
    # takes effect only where the OpenTelemetry API is installed (the otel extra).
    tracing: JavaBool = Field(False, alias="jmspy.tracing")

    # Redelivery policy (jmspy.redelivery.RedeliveryPolicy): Qpid JMS's maxRedeliveries, and
    # jmspy's names for the settings of the Artemis redelivery settings it implements.
    max_redeliveries: int | None = Field(
        None, alias="jms.redeliveryPolicy.maxRedeliveries", ge=-1, le=JAVA_INT_MAX
    )
    redelivery_delay: int | None = Field(None, alias="jmspy.redeliveryPolicy.redeliveryDelay")
    redelivery_delay_multiplier: float | None = Field(
        None, alias="jmspy.redeliveryPolicy.redeliveryDelayMultiplier"
    )
    max_redelivery_delay: int | None = Field(
        None, alias="jmspy.redeliveryPolicy.maxRedeliveryDelay"
    )
    collision_avoidance_factor: float | None = Field(
        None, alias="jmspy.redeliveryPolicy.collisionAvoidanceFactor"
    )
    max_delivery_attempts: int | None = Field(
        None, alias="jmspy.redeliveryPolicy.maxDeliveryAttempts"
    )
    after_last_attempt: str | None = Field(None, alias="jmspy.redeliveryPolicy.afterLastAttempt")
    dead_letter_queue: str | None = Field(None, alias="jmspy.redeliveryPolicy.deadLetterQueue")
    # Qpid JMS's outcome for a message over the limit: a name in any case or its number, read
    # as Qpid JMS reads them. None (not set, unlike Qpid JMS's MODIFIED_FAILED_UNDELIVERABLE):
    # the adapter's documented dead-letter handling stays the default.
    redelivery_outcome: (
        Annotated[RedeliveryOutcome, BeforeValidator(parse_redelivery_outcome)] | None
    ) = Field(None, alias="jms.redeliveryPolicy.outcome")

    def redelivery_policy(self) -> RedeliveryPolicy:
        """The factory-level policy from the options (validated; errors name the setting)."""
        attempts = self.max_delivery_attempts
        if attempts is None and self.max_redeliveries is not None:
            # Qpid JMS counts redeliveries; Artemis counts attempts (first delivery included).
            attempts = -1 if self.max_redeliveries < 0 else self.max_redeliveries + 1
        settings = {
            "redelivery_delay": self.redelivery_delay,
            "redelivery_delay_multiplier": self.redelivery_delay_multiplier,
            "max_redelivery_delay": self.max_redelivery_delay,
            "collision_avoidance_factor": self.collision_avoidance_factor,
            "max_delivery_attempts": attempts,
            "after_last_attempt": self.after_last_attempt,
            "dead_letter_queue": self.dead_letter_queue,
            "outcome": self.redelivery_outcome,
        }
        if self.redelivery_outcome is not None and self.after_last_attempt is not None:
            # Checked here too so that the error names the options as the URL spells them.
            raise IllegalArgumentException(
                "invalid connection option: jmspy.redeliveryPolicy.afterLastAttempt and "
                "jms.redeliveryPolicy.outcome both say what happens after the last attempt; "
                "give only one"
            )
        return RedeliveryPolicy.create(**{k: v for k, v in settings.items() if v is not None})

    @field_validator("adapter")
    @classmethod
    def _known_adapter(cls, value: str | None) -> str | None:
        if value is not None:
            from .adapters import PROFILES

            if value not in PROFILES:
                raise ValueError(f"unknown adapter; known: {', '.join(sorted(PROFILES))}")
        return value

    @field_validator("idle_timeout")
    @classmethod
    def _idle_timeout_off_or_sane(cls, value: int) -> int:
        # proton heartbeats at half the peer's timeout; a few ms kills the connection at once.
        if 0 < value < MIN_IDLE_TIMEOUT_MS:
            raise ValueError(f"must be 0 (off) or at least {MIN_IDLE_TIMEOUT_MS} ms")
        return value

    @field_validator("client_id")
    @classmethod
    def _client_id_not_empty(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("jms.clientID must not be empty")
        return value

    def tls_policy(self) -> TlsPolicy:
        """The TLS versions and cipher suites the transport.* options ask for (raises
        TlsPolicyError naming the option and the value, rule SEC-6)."""
        return resolve_tls_policy(
            self.enabled_protocols,
            self.disabled_protocols,
            self.enabled_cipher_suites,
            self.disabled_cipher_suites,
        )

    def presettles_consumer(self, mode: int, is_topic: bool) -> bool:
        """Whether a consumer of a session in ``mode`` on a topic or a queue is presettled:
        always in the no-acknowledgement modes, never in a transacted session, else as the
        presettle policy says (Qpid JMS's JmsDefaultPresettlePolicy; rules JMS-68, WM-17)."""
        if mode == SESSION_TRANSACTED:
            return False
        if mode in NOT_ACKNOWLEDGED or self.presettle_all or self.presettle_consumers:
            return True
        return self.presettle_topic_consumers if is_topic else self.presettle_queue_consumers

    def presettles_producer(self, mode: int, is_topic: bool | None) -> bool:
        """Whether sends of a session in ``mode`` to a topic, a queue or, for ``None``, any
        destination (an anonymous producer's link) go presettled, as Qpid JMS's
        JmsDefaultPresettlePolicy decides (rule WM-17)."""
        if self.presettle_all or self.presettle_producers:
            return True
        if is_topic is None:
            return False
        if mode == SESSION_TRANSACTED and self.presettle_transacted_producers:
            return True
        return self.presettle_topic_producers if is_topic else self.presettle_queue_producers

    def prefetch_for(self, kind: str) -> int:
        """Prefetch for a consumer kind: queue, topic, durable, browser.

        A specific option that was given wins over ``jms.prefetchPolicy.all``; one given
        before ``all`` in the URL (which ``all`` overrides in Qpid JMS, whose ``setAll`` sets
        the four in the order the options come) is dropped by :func:`build_options`."""
        name = _PREFETCH_FIELDS[kind]
        if self.prefetch_all is not None and name not in self.model_fields_set:
            return self.prefetch_all
        value: int = getattr(self, name)
        return value

    def __repr_args__(self) -> Any:
        # Secrets are already masked by SecretStr; keep the repr short too.
        return [(k, v) for k, v in super().__repr_args__() if v is not None]


_ALIASES = {f.alias: name for name, f in ConnectionOptions.model_fields.items() if f.alias}
_FIELDS = set(ConnectionOptions.model_fields)


class Endpoint(BaseModel):
    """Where to connect: scheme, host and port of the URL (credentials never live in the URL)."""

    model_config = ConfigDict(frozen=True)

    scheme: str
    host: str
    port: int

    @property
    def tls(self) -> bool:
        """Whether the connection uses TLS (scheme ``"amqps"``)."""
        return self.scheme == "amqps"

    def display(self) -> str:
        """The endpoint as ``scheme://host:port`` (an IPv6 literal in brackets, as in a URL:
        ``amqp://::1:5672`` would not say where the address ends)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def parse_url(url: str) -> tuple[Endpoint, dict[str, str]]:
    """Split a connection URL into its endpoint and raw query options."""
    if not isinstance(url, str):
        raise IllegalArgumentException(
            f"the connection URL must be a str such as amqp://host:port, got {type(url).__name__}"
        )
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # e.g. "amqp://[::1" (unclosed IPv6 bracket)
        raise IllegalArgumentException(
            f"invalid connection URL {shown_url(url)!r}: {exc}"
        ) from None
    if parts.scheme not in DEFAULT_PORTS:
        raise IllegalArgumentException(
            f"unsupported URL scheme {parts.scheme!r} in {shown_url(url)!r}: "
            "use amqp://host:port or amqps://host:port"
        )
    if parts.username is not None or parts.password is not None:
        # As in Qpid JMS: credentials in the URL end up in logs; they belong in options.
        raise IllegalArgumentException(
            "the connection URL must not contain user information; "
            "pass username and password to the ConnectionFactory instead"
        )
    if parts.path not in ("", "/") or parts.fragment:
        # A password with an unencoded "/" or "#" reads as a port and a path: refused, and
        # neither part is echoed.
        raise IllegalArgumentException(
            f"the connection URL {shown_url(url)!r} must be scheme://host:port with "
            "options in the query; it has a path or fragment (URL-encode '/', '?', '#' and "
            "'@' in option values)"
        )
    host = parts.hostname or "localhost"
    try:
        given_port: int | None = parts.port
        port_ok = True
    except ValueError:
        given_port, port_ok = None, False
    if not port_ok:
        # Raised outside the handler, so the parser's error (which quotes the text it read
        # as the port, perhaps part of a password) is not kept as the context.
        raise IllegalArgumentException(
            f"invalid port in connection URL {shown_url(url)!r}: a number 1-65535 is "
            "expected after the host"
        )
    if given_port == 0:
        # Port 0 is no port to connect to (Qpid JMS tries it and fails); it used to be read
        # as "no port" and silently replaced by the scheme's default.
        raise IllegalArgumentException(
            f"invalid port in connection URL {shown_url(url)!r}: a number 1-65535 is "
            "expected after the host"
        )
    port = DEFAULT_PORTS[parts.scheme] if given_port is None else given_port
    query = _query_options(parts.query)
    return Endpoint(scheme=parts.scheme, host=host, port=port), query


def build_options(query: dict[str, str], overrides: dict[str, Any]) -> ConnectionOptions:
    """Validate URL options and keyword overrides (dotted or snake_case names) together."""
    values: dict[str, Any] = {}
    for source in (query, overrides):
        given: dict[str, str] = {}
        for key, value in source.items():
            name = _ALIASES.get(key, key if key in _FIELDS else None)
            if name is None:
                # A password holding an unencoded "&" splits the query, its tail read as an
                # option name: with a secret option beside it, the name is not shown.
                shown = "(name not shown)" if _has_secret(source) else repr(key)
                raise IllegalArgumentException(
                    f"unknown connection option {shown}; known options: "
                    + ", ".join(sorted(_ALIASES))
                    + ("; URL-encode '&' in option values" if _has_secret(source) else "")
                )
            if name in given:
                # Its dotted and its snake_case name in the same place: which one was meant?
                raise IllegalArgumentException(
                    f"connection option {key!r} is given twice (also as {given[name]!r})"
                )
            given[name] = key
            if value is not None:
                # Moved to the end: the order of the options is what decides between
                # jms.prefetchPolicy.all and the specific prefetch options (below), and a
                # keyword comes after everything in the URL.
                values.pop(name, None)
                values[name] = value
    try:
        options = ConnectionOptions.model_validate(values)
        options.redelivery_policy()  # a bad policy setting is an error of the factory
        order = list(values)
        if "prefetch_all" in order:
            # Qpid JMS applies the options in their order and setAll sets all four
            # prefetches: a specific one given before all is overridden, one after it wins.
            # Validated above (a bad value is refused either way), then left out.
            overridden = set(order[: order.index("prefetch_all")]) & set(_PREFETCH_FIELDS.values())
            if overridden:
                options = ConnectionOptions.model_validate(
                    {k: v for k, v in values.items() if k not in overridden}
                )
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = str(err["loc"][0]) if err["loc"] else "?"
            alias = ConnectionOptions.model_fields[field].alias if field in _FIELDS else field
            shown = "***" if "password" in field.lower() else repr(err.get("input"))
            problems.append(f"{alias}={shown}: {err['msg']}")
        raise IllegalArgumentException("invalid connection option " + "; ".join(problems)) from None
    try:
        # Checked here, not at the first amqps:// connect: a TLS setting that cannot be
        # honoured is an error of the factory, before anything reaches the wire.
        options.tls_policy()
    except TlsPolicyError as exc:
        raise IllegalArgumentException(f"invalid connection option {exc}") from None
    return options


def _has_secret(options: dict[str, Any]) -> bool:
    """Whether ``options`` name a password (by its dotted or snake_case name)."""
    return any("password" in key.lower() for key in options)


def _query_options(query: str) -> dict[str, str]:
    """The URL query as a dict; an option given twice is an error (which one wins is not
    obvious, and a silently ignored value hides a mistake)."""
    options: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=False):
        if key in options:
            # The values are not shown: the option may be a password.
            raise IllegalArgumentException(
                f"connection option {key!r} is given more than once in the URL"
            )
        options[key] = value
    return options


# Anything from "//" to an "@" is user information (a password may hold "/", "?" or "#"
# unencoded, so the match does not stop at them); it is masked before the query is cut.
_USER_INFO = re.compile(r"//[^@()]*@")


def shown_url(url: str) -> str:
    """A connection URL as errors and logs may show it: no user information, no query (which
    may hold ``jms.password``). Over-masks rather than under-masks a malformed URL."""
    return _USER_INFO.sub("//***@", url).split("?", 1)[0]
