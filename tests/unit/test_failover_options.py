"""The failover URL, its options and Qpid JMS's reconnect delay schedule (no broker)."""

from __future__ import annotations

import pytest

import jmspy
from jmspy.errors import IllegalArgumentException
from jmspy.failover_options import FailoverOptions, parse_connection_url, reconnect_delay_ms


def test_plain_url_has_no_failover() -> None:
    parsed = parse_connection_url("amqp://h1:5672?jms.clientID=c")
    assert parsed.failover is None
    assert [s.display() for s in parsed.servers] == ["amqp://h1:5672"]
    assert parsed.query == {"jms.clientID": "c"}


def test_failover_url_with_qpid_jms_defaults() -> None:
    parsed = parse_connection_url("failover:(amqp://h1:5672,amqps://h2:5671)")
    assert [s.display() for s in parsed.servers] == ["amqp://h1:5672", "amqps://h2:5671"]
    options = parsed.failover
    assert options is not None
    # Qpid JMS's FailoverProvider defaults.
    assert options.initial_reconnect_delay == 0
    assert options.reconnect_delay == 10
    assert options.max_reconnect_delay == 30000
    assert options.use_reconnect_back_off is True
    assert options.reconnect_back_off_multiplier == 2.0
    assert options.max_reconnect_attempts == -1
    assert options.startup_max_reconnect_attempts == -1
    assert options.warn_after_reconnect_attempts == 10
    assert options.randomize is False
    assert options.amqp_open_server_list_action == "REPLACE"
    # jmspy's own, not Qpid JMS's: refused recoveries retried before the refusal stands.
    assert options.max_recovery_refusals == 10


def test_failover_options_nested_and_connection_options_are_split() -> None:
    parsed = parse_connection_url(
        "failover:(amqp://h1:5672?amqp.idleTimeout=5000,amqp://h2:5672)"
        "?failover.maxReconnectAttempts=3&failover.reconnectDelay=50"
        "&failover.nested.amqp.idleTimeout=2000&jms.clientID=app"
    )
    assert parsed.failover is not None
    assert parsed.failover.max_reconnect_attempts == 3
    assert parsed.failover.reconnect_delay == 50
    assert parsed.query == {"jms.clientID": "app"}
    # The nested option replaces a server's own one of the same name, as Qpid JMS applies
    # failover.nested.* over each URI's options (URISupport.applyParameters).
    assert parsed.servers[0].options == {"amqp.idleTimeout": "2000"}
    assert parsed.servers[1].options == {"amqp.idleTimeout": "2000"}


def test_failover_without_parentheses_single_server() -> None:
    parsed = parse_connection_url("failover:amqp://h1:5672?failover.randomize=true")
    assert [s.display() for s in parsed.servers] == ["amqp://h1:5672"]
    assert parsed.failover is not None and parsed.failover.randomize is True


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("failover:(amqp://h1:5672", "without closing"),
        ("failover:()", "names no server"),
        ("failover:(amqp://h1)?failover.reconnectDelays=5", "failover.reconnectDelays"),
        ("failover:(amqp://h1)?failover.maxReconnectAttempts=-5", "maxReconnectAttempts"),
        ("failover:(amqp://h1)?failover.amqpOpenServerListAction=DROP", "amqpOpenServerList"),
        ("failover:(amqp://h1)?failover.maxRecoveryRefusals=-2", "maxRecoveryRefusals='-2'"),
        ("failover:(amqp://h1?jms.clientID=x)", "jms.clientID"),
        ("failover:(amqp://h1)?failover.nested.jms.clientID=x", "only amqp.* and transport.*"),
        ("failover:(failover:(amqp://h1))", "cannot be nested"),
        ("failover:(ftp://h1)", "unsupported URL scheme"),
        ("failover:(amqp://h1)?jms.clientID=a&jms.clientID=b", "given twice"),
    ],
)
def test_bad_failover_urls_name_the_problem(url: str, needle: str) -> None:
    with pytest.raises(IllegalArgumentException) as info:
        parse_connection_url(url)
    assert needle in str(info.value)


def test_connection_factory_accepts_failover_url_and_reports_it() -> None:
    factory = jmspy.ConnectionFactory(
        "failover:(amqp://127.0.0.1:1,amqp://127.0.0.1:2)?failover.maxReconnectAttempts=2"
        "&jms.connectTimeout=500",
        "user",
        "secret",
    )
    assert factory.failover is not None
    assert factory.failover.max_reconnect_attempts == 2
    assert factory.options.connect_timeout == 500
    assert "failover:(amqp://127.0.0.1:1,amqp://127.0.0.1:2)" in repr(factory)
    assert "secret" not in repr(factory)


def test_delay_schedule_after_a_drop_follows_qpid_jms() -> None:
    options = FailoverOptions()
    # After a drop: at once (initialReconnectDelay 0), then 10 ms, then doubling, capped.
    delays = [reconnect_delay_ms(options, n, first_connect=False) for n in range(1, 8)]
    assert delays == [0, 10, 20, 40, 80, 160, 320]
    capped = FailoverOptions(**{"failover.maxReconnectDelay": 50})
    assert reconnect_delay_ms(capped, 10, first_connect=False) == 50


def test_delay_schedule_with_initial_delay_and_without_back_off() -> None:
    options = FailoverOptions(
        **{"failover.initialReconnectDelay": 500, "failover.reconnectDelay": 100}
    )
    assert [reconnect_delay_ms(options, n, first_connect=False) for n in (1, 2, 3, 4)] == [
        500,
        100,
        200,
        400,
    ]
    # First connect: attempt 1 at once, attempt 2 after the initial delay, then the back-off,
    # which (as Qpid JMS counts attempts) multiplies from the third attempt on.
    assert [reconnect_delay_ms(options, n, first_connect=True) for n in (1, 2, 3, 4, 5)] == [
        0,
        500,
        200,
        400,
        800,
    ]
    flat = FailoverOptions(
        **{"failover.useReconnectBackOff": "false", "failover.reconnectDelay": 70}
    )
    assert [reconnect_delay_ms(flat, n, first_connect=False) for n in (2, 3, 9)] == [70, 70, 70]


def test_startup_attempt_limit_defaults_to_the_reconnect_limit() -> None:
    options = FailoverOptions(**{"failover.maxReconnectAttempts": 7})
    assert options.attempt_limit(first_connect=True) == 7
    assert options.attempt_limit(first_connect=False) == 7
    startup = FailoverOptions(
        **{"failover.maxReconnectAttempts": 7, "failover.startupMaxReconnectAttempts": 2}
    )
    assert startup.attempt_limit(first_connect=True) == 2
    assert startup.attempt_limit(first_connect=False) == 7


def test_first_connect_gives_up_after_the_startup_attempts() -> None:
    # Nothing listens on these ports: each attempt tries both servers, then gives up.
    factory = jmspy.ConnectionFactory(
        "failover:(amqp://127.0.0.1:1,amqp://127.0.0.1:2)?failover.startupMaxReconnectAttempts=2"
        "&failover.reconnectDelay=1&jms.connectTimeout=2000",
        client_id="c",
    )
    with pytest.raises(jmspy.JMSException) as info:
        factory.createConnection()
    assert "127.0.0.1" in str(info.value)


def test_server_list_from_the_open_frame() -> None:
    from jmspy._amqp.failover import merge_server_list
    from jmspy.options import ConnectionOptions, Endpoint

    options = ConnectionOptions()
    a = Endpoint(scheme="amqp", host="a", port=1)
    b = Endpoint(scheme="amqp", host="b", port=2)
    pool = [(a, options), (b, options)]
    advertised = [
        {"network-host": "c", "port": 3},
        {"network-host": "d", "port": 4, "scheme": "amqps"},
        {"port": 5},  # no host: dropped
        {"network-host": "e", "port": "x"},  # bad port: dropped
    ]
    replaced, index = merge_server_list(pool, 1, advertised, "REPLACE")
    assert [e.display() for e, _ in replaced] == ["amqp://b:2", "amqp://c:3", "amqps://d:4"]
    assert index == 0
    added, index = merge_server_list(pool, 1, advertised, "ADD")
    assert [e.display() for e, _ in added] == [
        "amqp://a:1",
        "amqp://b:2",
        "amqp://c:3",
        "amqps://d:4",
    ]
    assert index == 1
    assert merge_server_list(pool, 0, advertised, "IGNORE") == (pool, 0)
    assert merge_server_list(pool, 0, None, "REPLACE") == (pool, 0)


def test_a_servers_own_options_stay_where_no_nested_option_names_them() -> None:
    parsed = parse_connection_url(
        "failover:(amqp://h1:5672?amqp.idleTimeout=5000&transport.tcpKeepAlive=true,"
        "amqp://h2:5672)?failover.nested.amqp.idleTimeout=2000"
    )
    assert parsed.servers[0].options == {
        "amqp.idleTimeout": "2000",
        "transport.tcpKeepAlive": "true",
    }
    assert parsed.servers[1].options == {"amqp.idleTimeout": "2000"}
