"""Drop reasons for received messages that cannot be decoded: which section, what was wrong.

proton's own text for a section it cannot decode is ``[-4]: None`` or similar, and a field of
the wrong type surfaced as a bare Python TypeError; these helpers name the section (index,
kind, byte offset) and the AMQP type found, for the WARNING logged when the message is
settled modified(delivery-failed, undeliverable-here).
"""

from __future__ import annotations

from typing import Any

from proton import DataException, Described

# Section descriptors (AMQP 1.0 part 3, 3.2) by code.
SECTION_NAMES = {
    0x70: "header",
    0x71: "delivery-annotations",
    0x72: "message-annotations",
    0x73: "properties",
    0x74: "application-properties",
    0x75: "data",
    0x76: "amqp-sequence",
    0x77: "amqp-value",
    0x78: "footer",
}


# proton's error codes (pn_error codes in proton/error.h) as they apply to decoding.
_PROTON_DECODE_ERRORS = {
    -1: "ends before its end",
    -2: "is malformed",
    -3: "is too large",
    -4: "is truncated (the payload ends inside it)",
    -6: "has an invalid encoding",
}


def undecodable_section(view: memoryview, index: int, pos: int, exc: DataException) -> str:
    """Which section could not be decoded and why, for the log line of a dropped message
    (proton's own text is only ``[-4]: None`` or similar)."""
    code_text = str(exc)
    code = None
    if code_text.startswith("[") and "]" in code_text:
        try:
            code = int(code_text[1 : code_text.index("]")])
        except ValueError:
            code = None
    why = _PROTON_DECODE_ERRORS.get(code if code is not None else 0, "cannot be decoded")
    head = bytes(view[pos : pos + 3])
    if len(head) == 3 and head[0] == 0x00 and head[1] == 0x53:
        name = SECTION_NAMES.get(head[2], f"unknown section 0x{head[2]:02x}")
        what = f"section {index} ({name})"
    elif head[:1] == b"\x00":
        what = f"section {index}" if len(head) < 3 else f"section {index} (symbolic descriptor)"
    else:
        what = f"section {index} (format code 0x{head[0]:02x}, not a described section)"
    return (
        f"Cannot decode AMQP message: {what} at byte {pos} of {len(view)} {why} "
        f"[proton {code_text}]"
    )


def amqp_type_name(value: Any) -> str:
    """The AMQP type of a decoded value, for error messages (arrays decode to lists)."""
    if isinstance(value, Described):
        return f"a described value (descriptor {value.descriptor!r})"
    names = {bytes: "binary", str: "a string", dict: "a map", list: "a list", bool: "a boolean"}
    return names.get(type(value), f"{type(value).__name__} {value!r:.40}")
