"""The properties section jmspy writes in Python is byte for byte what proton.Data writes."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from proton import Data, symbol, uint, ulong

from jmspy._amqp.codec.properties import properties_section
from jmspy.errors import MessageFormatException

PROPERTIES = 0x73


def _put(d: Data, index: int, value: Any) -> None:
    if index in (0, 5):  # message-id, correlation-id
        if isinstance(value, str):
            d.put_string(value)
        elif isinstance(value, ulong):
            d.put_ulong(value)
        elif isinstance(value, uuid.UUID):
            d.put_uuid(value)
        else:
            d.put_binary(value)
    elif index == 1:
        d.put_binary(value)
    elif index in (6, 7):
        d.put_symbol(value)
    elif index in (8, 9):
        d.put_timestamp(value)
    elif index == 11:
        d.put_uint(value)
    else:
        d.put_string(value)


def _by_proton(fields: list[Any]) -> bytes:
    last = max((i for i, v in enumerate(fields) if v is not None), default=-1)
    if last < 0:
        return b""
    d = Data(64)
    d.put_described()
    d.enter()
    d.put_ulong(PROPERTIES)
    d.put_list()
    d.enter()
    for i in range(last + 1):
        if fields[i] is None:
            d.put_null()
        else:
            _put(d, i, fields[i])
    d.exit()
    d.exit()
    return bytes(d.encode())


CASES = [
    pytest.param([None] * 13, id="all-absent"),
    pytest.param(
        ["ID:abc:1:1:1", None, "q", None, None, None, symbol("application/octet-stream")]
        + [None, None, 1_700_000_000_000, None, None, None],
        id="a-bytes-message",
    ),
    pytest.param(
        [ulong(5), b"user", "topic://x" * 40, "subject", "reply", uuid.uuid4()]
        + [None, symbol("gzip"), 1_700_000_000_000, 1, "group", uint(70_000), "rtg"],
        id="every-field-long-values",
    ),
    pytest.param(
        [ulong(0), None, None, None, None, b"\x01" * 300] + [None] * 5 + [uint(0), None],
        id="zeros-and-vbin32",
    ),
    pytest.param(["x" * 300] + [None] * 12, id="str32"),
    pytest.param(
        [ulong(300), None, None, None, None, ulong(2**64 - 1), None, None, -5]
        + [None, None, uint(255), None],
        id="ulong-uint-boundaries-negative-timestamp",
    ),
    pytest.param(["ID:ünïcødé"] + [None] * 8 + [0] + [None] * 3, id="utf8-and-zero-timestamp"),
]


@pytest.mark.parametrize("fields", CASES)
def test_properties_section_is_what_proton_writes(fields: list[Any]) -> None:
    assert properties_section(fields) == _by_proton(fields)


def test_an_id_of_another_type_is_refused_naming_it() -> None:
    with pytest.raises(MessageFormatException, match="float"):
        properties_section([1.5] + [None] * 12)
