"""A password given where it does not belong (in the URL's user information, unencoded in an
option value, twice, in a URL of the wrong type) is refused with a message that does not
repeat it, and the objects that hold a URL do not show it in their repr (rule SEC-4's "no
credential in any log line, repr or error")."""

from __future__ import annotations

from typing import Any

import pytest
from jmspy.conformance.context import Target

import jmspy
from jmspy.options import ConnectionOptions, shown_url
from jmspy.spark._options import JmsOptions

SECRET = "S3cr3tXYZ"


def _texts(exc: BaseException) -> list[str]:
    out: list[str] = []
    current: BaseException | None = exc
    while current is not None:
        out += [str(current), repr(current)]
        current = current.__cause__ or current.__context__
    return out


@pytest.mark.parametrize(
    "url",
    [
        f"amqpx://u:{SECRET}@127.0.0.1:1",  # wrong scheme
        f"amqp://u:{SECRET}@[::1",  # unparsable
        f"failover:(amqpx://u:{SECRET}@h1)",
        f"amqp://u:{SECRET}/x@h",  # "/" in the password: a path
        "amqp://u:S3cr/etXYZ@h",
        "amqp://u:S3cr?etXYZ@h",  # "?" in the password: read as the port
        "amqp://u:S3cr#etXYZ@h",
        f"amqp://h?jms.password={SECRET}&jms.password=x",  # given twice
        f"failover:()?jms.password={SECRET}",
        f"failover:(amqp://h1?jms.password={SECRET}",
        f"failover:(amqp://h1)x?jms.password={SECRET}",
        f"failover:(amqp://h1,failover:(amqp://h2))?jms.password={SECRET}",
        f"failover:(amqp://u:{SECRET}@h1)?a=1&a=2",
        f"failover:amqp://u:{SECRET}@h1?a=1&a=2",
        f"amqp://h?jms.password=ab&{SECRET}",  # "&" in the password: an unknown option
        f"amqp://u:1234/{SECRET}@h",  # used to be accepted as host u, port 1234
    ],
)
def test_a_refused_url_does_not_repeat_the_password(url: str) -> None:
    with pytest.raises(jmspy.IllegalArgumentException) as caught:
        jmspy.ConnectionFactory(url)
    for text in _texts(caught.value):
        assert "S3cr" not in text, text


def test_a_url_of_the_wrong_type_is_named_by_its_type_only() -> None:
    with pytest.raises(jmspy.IllegalArgumentException, match="got bytes") as caught:
        jmspy.ConnectionFactory(f"amqp://u:{SECRET}@h".encode())  # type: ignore[arg-type]
    assert all(SECRET not in text for text in _texts(caught.value))


@pytest.mark.parametrize(
    "fields",
    [{"password": [SECRET]}, {"password": "x", "bogus": SECRET}],
)
def test_options_model_validation_errors_hide_their_input(fields: dict[str, Any]) -> None:
    with pytest.raises(ValueError) as caught:
        ConnectionOptions(**fields)
    assert SECRET not in str(caught.value)


def test_shown_url_masks_user_information_and_drops_the_query() -> None:
    assert shown_url(f"amqp://u:{SECRET}@h:5672?jms.password={SECRET}") == "amqp://***@h:5672"
    assert shown_url("amqps://broker:5671?transport.verifyHost=true") == "amqps://broker:5671"
    assert shown_url(f"failover:(amqp://a:1,amqp://u:{SECRET}@b:2)").count(SECRET) == 0


def test_spark_and_conformance_options_keep_the_url_and_password_out_of_their_repr() -> None:
    url = f"amqp://h:5672?jms.password={SECRET}"
    spark = JmsOptions.parse({"url": url, "destination": "q", "password": SECRET})
    target = Target(label="t", kind="artemis", url=url, username="u", password=SECRET)
    plain = Target(label="t", kind="artemis", url="amqp://h:5672", password=SECRET)
    for text in (repr(spark), str(spark), repr(target), str(target), plain.model_dump_json()):
        assert SECRET not in text, text
    assert target.public_url() == "amqp://h:5672"
