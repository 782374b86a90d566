"""One place for each wire question: delayed-delivery support (DD-1), producer settings shared by
MessageProducer and JMSProducer, and the temporary destinations' shared body."""

from __future__ import annotations

import pytest
from jmspy.adapters import PROFILES

from jmspy.destination import TemporaryDestination, TemporaryQueue, TemporaryTopic, Topic
from jmspy.errors import JMSException
from jmspy.producer_settings import DEFAULT_PRIORITY, ProducerSettings

DELAY = "DELAYED_DELIVERY"


@pytest.mark.parametrize(
    ("offered", "link", "expected"),
    [
        ({DELAY}, None, True),  # the connection offers it: every link
        (set(), None, None),  # not known before a link is attached
        (set(), {DELAY}, True),  # the link's target offers it
        (set(), set(), False),
    ],
)
def test_generic_profile_decides_delay_from_connection_then_link(
    offered: set[str], link: set[str] | None, expected: bool | None
) -> None:
    assert PROFILES["generic"].supports_delayed_delivery(offered, link) is expected


def test_profile_word_overrides_capabilities() -> None:
    ibm = PROFILES["ibmmq"]
    assert ibm.delay_form == "unsupported"
    assert ibm.supports_delayed_delivery({DELAY}, {DELAY}) is False
    forced = PROFILES["generic"].model_copy(update={"delay_supported": True})
    assert forced.supports_delayed_delivery(set(), set()) is True


def test_producer_settings_validate_and_apply_destination_default_priority() -> None:
    settings = ProducerSettings()
    topic = Topic("t", default_priority=7)
    assert settings.priority_for(topic) == 7  # DD-16: no priority chosen yet
    settings.set_priority(DEFAULT_PRIORITY)
    assert settings.priority_for(topic) == DEFAULT_PRIORITY
    settings.set_delivery_delay(1000)
    with pytest.raises(JMSException, match="shorter than the delivery delay"):
        settings.set_time_to_live(500)  # DD-2
    assert settings.time_to_live == 0
    with pytest.raises(JMSException, match="DeliveryMode"):
        settings.set_delivery_mode(7)


@pytest.mark.parametrize("cls", [TemporaryQueue, TemporaryTopic])
def test_temporary_kinds_share_one_body(cls: type[TemporaryDestination]) -> None:
    deleted: list[object] = []
    owner = object()
    destination = cls("tmp-1", owner=owner, on_delete=deleted.append)
    assert destination.is_temporary and destination.owner is owner and not destination.deleted
    destination.delete()
    assert destination.deleted and deleted == [destination]
