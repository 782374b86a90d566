"""jmspy's SASL client (jmspy/_amqp/sasl.py) without a network: SCRAM against the RFC test
vector, mechanism choice, and what the errors say."""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct

import pytest
from proton import Data

from jmspy._amqp import sasl
from jmspy.errors import JMSException, JMSSecurityException


def _frame(code: int, *fields: object) -> bytes:
    data = Data()
    data.put_described()
    data.enter()
    data.put_ulong(code)
    data.put_list()
    data.enter()
    for value in fields:
        if isinstance(value, list):
            data.put_array(False, Data.SYMBOL)
            data.enter()
            for name in value:
                data.put_symbol(name)
            data.exit()
        elif isinstance(value, bytes):
            data.put_binary(value)
        elif isinstance(value, int):
            data.put_ubyte(value)
    data.exit()
    data.exit()
    body = data.encode()
    return struct.pack(">IBBH", 8 + len(body), 2, 1, 0) + body


def _decode_init(out: bytes) -> tuple[str, bytes]:
    code, fields = sasl._decode(out[8:])
    assert code == 0x41
    return str(fields[0]), fields[1]


def _client(**overrides: object) -> sasl.SaslClient:
    options: dict[str, object] = {
        "username": "user",
        "password": "pencil",
        "allowed": None,
        "hostname": "broker",
        "has_client_certificate": False,
        "where": "amqp://broker:5672",
    }
    options.update(overrides)
    return sasl.SaslClient(**options)  # type: ignore[arg-type]


def test_scram_sha256_matches_rfc7677_example():
    # RFC 7677 section 3: user "user", password "pencil", the example's client nonce.
    scram = sasl._Scram("sha256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    assert scram.client_first() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    server_first = (
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    assert scram.step(server_first) == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert not scram.verified
    scram.step(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
    assert scram.verified


def test_leftover_after_outcome_is_kept_for_proton():
    client = _client(allowed=("PLAIN",))
    assert client.start() == sasl.SASL_HEADER
    client.feed(sasl.SASL_HEADER + _frame(0x40, ["PLAIN"]))
    client.feed(_frame(0x44, 0) + b"AMQP\x00\x01\x00\x00")
    assert client.done
    assert client.leftover == b"AMQP\x00\x01\x00\x00"


def _scram_server_final(client_first: bytes, password: str, wrong: bool = False):  # type: ignore[no-untyped-def]
    """A minimal SCRAM-SHA-512 server for one exchange."""
    salt, iterations = b"salt-salt", 4096
    bare = client_first[3:].decode()
    nonce = bare.split("r=", 1)[1] + "server"
    server_first = f"r={nonce},s={base64.b64encode(salt).decode()},i={iterations}".encode()

    def final(client_final: bytes) -> bytes:
        without_proof = client_final.rsplit(b",p=", 1)[0]
        auth = b",".join((bare.encode(), server_first, without_proof))
        salted = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations)
        server_key = hmac.new(salted, b"Server Key", "sha512").digest()
        signature = hmac.new(server_key, auth, "sha512").digest()
        if wrong:
            signature = bytes(len(signature))
        return b"v=" + base64.b64encode(signature)

    return server_first, final


@pytest.mark.parametrize("where", ["challenge", "outcome"])
def test_scram_sha512_checks_the_server_signature(where: str):
    client = _client(username="alice", password="secret")
    out = client.feed(sasl.SASL_HEADER + _frame(0x40, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]))
    mechanism, initial = _decode_init(out)
    assert mechanism == "SCRAM-SHA-512"  # the strongest both sides have
    server_first, final = _scram_server_final(initial, "secret")
    out = client.feed(_frame(0x42, server_first))
    verifier = final(sasl._decode(out[8:])[1][0])
    if where == "challenge":
        out = client.feed(_frame(0x42, verifier))
        assert sasl._decode(out[8:]) == (0x43, [b""])
        client.feed(_frame(0x44, 0))
    else:
        client.feed(_frame(0x44, 0, verifier))
    assert client.done


def test_scram_refuses_a_server_that_does_not_know_the_password():
    client = _client(username="alice", password="secret", allowed=("SCRAM-SHA-512",))
    _, initial = _decode_init(client.feed(sasl.SASL_HEADER + _frame(0x40, ["SCRAM-SHA-512"])))
    server_first, final = _scram_server_final(initial, "secret", wrong=True)
    out = client.feed(_frame(0x42, server_first))
    with pytest.raises(JMSSecurityException, match="signature"):
        client.feed(_frame(0x44, 0, final(sasl._decode(out[8:])[1][0])))


def test_scram_outcome_ok_without_signature_is_refused():
    client = _client(allowed=("SCRAM-SHA-256",))
    client.feed(sasl.SASL_HEADER + _frame(0x40, ["SCRAM-SHA-256"]))
    with pytest.raises(JMSSecurityException, match="without proving"):
        client.feed(_frame(0x44, 0))


def test_wrong_password_outcome_is_a_security_exception_naming_user_and_mechanism():
    client = _client(username="alice", password="x", allowed=("PLAIN",))
    client.feed(sasl.SASL_HEADER + _frame(0x40, ["PLAIN"]))
    with pytest.raises(JMSSecurityException) as err:
        client.feed(_frame(0x44, 1))
    assert "'alice'" in str(err.value) and "PLAIN" in str(err.value) and "auth" in str(err.value)
    assert "x" not in str(err.value).split("'alice'")[1].split()[0]  # no password in the text


def test_mismatch_names_offered_and_allowed_mechanisms():
    client = _client(allowed=("SCRAM-SHA-256",))
    with pytest.raises(JMSSecurityException) as err:
        client.feed(sasl.SASL_HEADER + _frame(0x40, ["PLAIN", "ANONYMOUS"]))
    text = str(err.value)
    assert "[PLAIN ANONYMOUS]" in text and "[SCRAM-SHA-256]" in text
    assert "amqp.saslMechanisms" in text


def test_external_only_with_a_client_certificate():
    offered = sasl.SASL_HEADER + _frame(0x40, ["EXTERNAL", "PLAIN"])
    without = _client(username="u", password="p")
    assert _decode_init(without.feed(offered))[0] == "PLAIN"
    with_cert = _client(username=None, password=None, has_client_certificate=True)
    mechanism, initial = _decode_init(with_cert.feed(offered))
    assert (mechanism, initial) == ("EXTERNAL", b"")  # no authzid: Artemis refuses one


def test_anonymous_is_not_chosen_when_credentials_are_configured():
    client = _client(username="u", password="p")
    with pytest.raises(JMSSecurityException, match=r"offers \[ANONYMOUS\]"):
        client.feed(sasl.SASL_HEADER + _frame(0x40, ["ANONYMOUS"]))


def test_unknown_mechanism_option_is_named():
    with pytest.raises(JMSException, match="amqp.saslMechanisms='PLAIN,GSSAPI'.*GSSAPI"):
        sasl.parse_mechanisms("PLAIN,GSSAPI")
    assert sasl.parse_mechanisms("scram-sha-256 PLAIN") == ("SCRAM-SHA-256", "PLAIN")


def test_plain_amqp_header_instead_of_sasl_is_explained():
    client = _client()
    with pytest.raises(JMSSecurityException, match="does not accept SASL"):
        client.feed(b"AMQP\x00\x01\x00\x00")
