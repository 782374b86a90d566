"""The catalogue, the raw section reader and the command line, without a broker."""

from __future__ import annotations

import collections
import re

import pytest
from jmspy.conformance import cli
from jmspy.conformance.catalogue import FAMILIES, CatalogueError, catalogue, select
from jmspy.conformance.context import CAPABILITIES
from jmspy.conformance.raw import parse_sections, payload_from_trace
from jmspy.conformance.registry import CAPABILITY_FALLBACKS, REGISTRY
from proton import Message, byte, symbol, ulong

from jmspy.rules import RULES


def test_one_check_per_rule_and_one_rule_per_check() -> None:
    entries = catalogue()
    assert [e.id for e in entries] == [e.id for e in entries if e.id in RULES]
    assert {e.id for e in entries} == set(RULES) == set(REGISTRY)
    sizes = collections.Counter(e.family for e in entries)
    assert sizes == {"DD": 16, "RD": 12, "BL": 12, "JMS": 45, "WM": 17, "SEC": 6, "FO": 6}
    assert list(sizes) == list(FAMILIES)  # family order


def test_entries_take_their_wording_from_the_rules() -> None:
    for entry in catalogue():
        rule = RULES[entry.id]
        assert (entry.title, entry.text, entry.source, entry.level) == (
            rule.title,
            rule.text,
            rule.source,
            rule.level,
        )
        assert set(entry.capabilities) <= set(CAPABILITIES)
        assert re.fullmatch(r"(DD|RD|BL|JMS|WM|SEC|FO)-\d+", entry.id)


def test_capability_fallbacks_are_named() -> None:
    entries = {e.id: e for e in catalogue()}
    assert "DELAYED_DELIVERY" in CAPABILITY_FALLBACKS
    assert "DD-1" in (entries["DD-7"].fallback or "")
    assert entries["RD-9"].fallback and "max_delivery_attempts" in entries["RD-9"].fallback


def test_select_by_id_family_and_prefix() -> None:
    entries = catalogue()
    assert [e.id for e in select(entries, ["DD-7"])] == ["DD-7"]
    assert {e.family for e in select(entries, ["wm"])} == {"WM"}
    assert len(select(entries, ["RD-"])) == 12
    chosen = select(entries, ["DD", "JMS-3"], ["DD-1", "DD-2"])
    assert [e.id for e in chosen][:2] == ["DD-3", "DD-4"]
    assert "JMS-3" in [e.id for e in chosen] and "JMS-33" not in [e.id for e in chosen]
    with pytest.raises(CatalogueError, match="XX-1"):
        select(entries, ["XX-1"])


def _trace_line(payload: bytes, truncate: bool = False) -> str:
    """A frame-trace line as proton prints it: printable ASCII as is, the rest as \\xHH."""
    quoted = "".join(
        chr(b) if 32 <= b < 127 and b not in (0x5C, 0x22) else f"\\x{b:02x}" for b in payload
    )
    line = (
        "127.0.0.1:5672 FRAME: 0 -> @transfer(20) [handle=0x0, delivery-id=0x0, "
        f'delivery-tag=b"1", message-format=0x0] ({len(payload)}) {quoted}'
    )
    return line[:200] + "... (truncated)" if truncate else line


def test_traced_transfers_decode_to_the_exact_sections() -> None:
    message = Message(
        body='text "quoted" \\ and é',
        durable=True,
        priority=7,
        id=ulong(5),
        annotations={symbol("x-opt-jms-msg-type"): byte(5)},
        properties={"n": 1},
    )
    payload = message.encode()
    assert payload_from_trace(_trace_line(payload)) == payload
    raw = parse_sections(payload)
    assert raw.sections == [
        "header",
        "message-annotations",
        "properties",
        "application-properties",
        "amqp-value",
    ]
    assert raw.header == {"durable": True, "priority": 7}
    assert raw.annotations == {"x-opt-jms-msg-type": 5}
    assert raw.properties["message-id"] == 5
    assert raw.body == [("amqp-value", 'text "quoted" \\ and é')]
    assert payload_from_trace(_trace_line(payload, truncate=True)) is None
    assert payload_from_trace("127.0.0.1:5672 FRAME: 0 <- @flow(19) [...]") is None


def test_cli_lists_the_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--list", "--only", "BL"]) == 0
    out = capsys.readouterr().out
    assert "BL-12" in out and "DD-1" not in out


def test_cli_refuses_unknown_formats_and_ids() -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["--format", "md,pdf"])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        cli.main(["--only", "NOPE-1"])


def test_cli_without_docker_names_the_reason_and_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    import jmspy.conformance.brokers.container as container

    monkeypatch.setattr(
        container, "docker_available", lambda: (False, "no Docker engine: test says so")
    )
    status = cli.main(
        ["--broker", "container:apache/artemis:latest", "--report", str(tmp_path), "--only", "DD-1"]
    )
    assert status == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["container:apache/artemis:latest: no Docker engine: test says so"]
