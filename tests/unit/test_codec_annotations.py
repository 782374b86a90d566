"""The message-annotations section of a delayed message is byte for byte what proton.Data
writes, in both delay forms, for every message, destination and reply-to type."""

from __future__ import annotations

import itertools

import pytest
from proton import Data, symbol, timestamp

from jmspy._amqp.codec.encode import _annotations_section

MESSAGE_ANNOTATIONS = 0x72


def _by_proton(
    msg_type: int, dest_type: int, reply_type: int, delivery_time: int | None, form: str
) -> bytes:
    d = Data(16)
    d.put_described()
    d.enter()
    d.put_ulong(MESSAGE_ANNOTATIONS)
    d.put_map()
    d.enter()
    d.put_symbol(symbol("x-opt-jms-msg-type"))
    d.put_byte(msg_type)
    if dest_type >= 0:
        d.put_symbol(symbol("x-opt-jms-dest"))
        d.put_byte(dest_type)
    if reply_type >= 0:
        d.put_symbol(symbol("x-opt-jms-reply-to"))
        d.put_byte(reply_type)
    if delivery_time is not None:
        if form == "scheduled-enqueue-time":
            d.put_symbol(symbol("x-opt-scheduled-enqueue-time"))
            d.put_timestamp(timestamp(delivery_time))
        else:
            d.put_symbol(symbol("x-opt-delivery-time"))
            d.put_long(delivery_time)
    d.exit()
    d.exit()
    return bytes(d.encode())


@pytest.mark.parametrize("form", ["delivery-time", "scheduled-enqueue-time"])
@pytest.mark.parametrize("delivery_time", [None, 0, 127, 128, -1, 1_795_703_082_467, 2**63 - 1])
def test_annotations_as_proton_writes_them(delivery_time: int | None, form: str) -> None:
    for msg_type, dest_type, reply_type in itertools.product(range(6), (-1, 0, 3), (-1, 1)):
        expected = _by_proton(msg_type, dest_type, reply_type, delivery_time, form)
        # Twice: the first call builds the cached part, the second uses it.
        for _ in range(2):
            assert (
                _annotations_section(msg_type, dest_type, reply_type, delivery_time, form)
                == expected
            )
