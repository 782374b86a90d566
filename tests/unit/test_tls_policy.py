"""The TLS protocol and cipher suite options (rule SEC-6): Java's names resolved against
Python's ssl module, and every setting that cannot be honoured refused when the factory is
made, naming the option, the value and the rule."""

from __future__ import annotations

import ssl

import pytest

import jmspy
from jmspy._amqp import tls_policy
from jmspy._amqp.tls import client_context

TLS13 = "TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256,TLS_AES_128_GCM_SHA256"

# IANA registry code points and names (the names Java uses).
IANA = {
    0xC030: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    0xC02B: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    0xCCA8: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    0xC027: "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
    0xC014: "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    0x009E: "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
    0x009C: "TLS_RSA_WITH_AES_128_GCM_SHA256",
    0x002F: "TLS_RSA_WITH_AES_128_CBC_SHA",
    0xC0AC: "TLS_ECDHE_ECDSA_WITH_AES_128_CCM",
    0xC0AE: "TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8",
    0xC061: "TLS_ECDHE_RSA_WITH_ARIA_256_GCM_SHA384",
    0x1302: "TLS_AES_256_GCM_SHA384",
}


def _factory(**options: object) -> jmspy.ConnectionFactory:
    return jmspy.ConnectionFactory("amqps://localhost:5671", **options)


def _refused(match: str, **options: object) -> str:
    with pytest.raises(jmspy.IllegalArgumentException, match=match) as err:
        _factory(**options)
    text = str(err.value)
    assert "[rule SEC-6]" in text
    return text


def test_java_names_of_suites_match_the_iana_registry() -> None:
    offered = {c["id"] & 0xFFFF: c for c in tls_policy._all_ciphers()}
    checked = 0
    for code, name in IANA.items():
        if code in offered:
            assert tls_policy.iana_name(offered[code]) == name
            checked += 1
    assert checked >= 8, "this OpenSSL offers too few of the registry's common suites"


def test_by_default_both_versions_and_pythons_cipher_defaults() -> None:
    options = _factory().options
    assert options.disabled_protocols == "SSLv2Hello,SSLv3"  # Qpid JMS's default
    assert options.tls_policy() == tls_policy.TlsPolicy(("TLSv1.2", "TLSv1.3"), None)
    context = client_context(options)
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    assert context.maximum_version == ssl.TLSVersion.TLSv1_3


def test_url_names_set_the_context_range_and_ciphers() -> None:
    factory = jmspy.ConnectionFactory(
        "amqps://localhost:5671?transport.enabledProtocols=TLSv1.2,TLSv1.3"
        "&transport.enabledCipherSuites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,"
        "ECDHE-RSA-AES128-GCM-SHA256"
    )
    context = client_context(factory.options)
    # No TLS 1.3 suite listed: TLSv1.3 is left out, as Java's SSLEngine leaves it out.
    assert context.maximum_version == ssl.TLSVersion.TLSv1_2
    names = [c["name"] for c in context.get_ciphers() if c["protocol"] != "TLSv1.3"]
    assert names == ["ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-AES128-GCM-SHA256"]


def test_tls13_only() -> None:
    context = client_context(_factory(enabled_protocols="TLSv1.3").options)
    assert context.minimum_version == context.maximum_version == ssl.TLSVersion.TLSv1_3
    assert _factory(disabled_protocols="TLSv1.2").options.tls_policy().protocols == ("TLSv1.3",)


def test_all_tls13_suites_and_no_tls12_suite_is_tls13_only() -> None:
    policy = _factory(enabled_cipher_suites=TLS13).options.tls_policy()
    assert policy == tls_policy.TlsPolicy(("TLSv1.3",), None)


def test_disabling_the_tls13_suites_leaves_tls12() -> None:
    policy = _factory(disabled_cipher_suites=TLS13).options.tls_policy()
    assert policy.protocols == ("TLSv1.2",)
    assert policy.ciphers is not None and "TLS_AES" not in policy.ciphers


def test_retired_versions_are_refused_among_the_enabled_and_accepted_among_the_disabled() -> None:
    text = _refused("TLSv1.1", enabled_protocols="TLSv1.1,TLSv1.2")
    assert "transport.enabledProtocols='TLSv1.1,TLSv1.2'" in text and "RFC 8996" in text
    _refused("SSLv3", enabled_protocols="SSLv3")
    policy = _factory(disabled_protocols="SSLv3,TLSv1,TLSv1.1").options.tls_policy()
    assert policy.protocols == ("TLSv1.2", "TLSv1.3")


def test_an_unknown_protocol_name_is_refused() -> None:
    text = _refused("not a protocol name", disabled_protocols="TLSv1.4")
    assert "transport.disabledProtocols='TLSv1.4'" in text


def test_nothing_left_is_refused() -> None:
    _refused("no protocol is left", enabled_protocols="TLSv1.2", disabled_protocols="TLSv1.2")
    _refused("names no protocol", enabled_protocols=" , ")
    _refused(
        "no cipher suite is left",
        enabled_protocols="TLSv1.3",
        enabled_cipher_suites="TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    )


def test_some_but_not_all_tls13_suites_is_refused() -> None:
    text = _refused(
        "cannot choose among the TLS 1.3 suites", disabled_cipher_suites="TLS_AES_128_GCM_SHA256"
    )
    assert "transport.disabledCipherSuites='TLS_AES_128_GCM_SHA256'" in text


def test_unknown_and_anonymous_suites_are_refused() -> None:
    text = _refused("is not a cipher suite", enabled_cipher_suites="TLS_ECDHE_RSA_WITH_ROT13")
    assert "TLS_ECDHE_RSA_WITH_ROT13" in text
    _refused("is not a cipher suite", disabled_cipher_suites="ECDHE-RSA-ROT13")
    anonymous = [c for c in tls_policy._all_ciphers() if c.get("auth") == "auth-null"]
    if anonymous:
        _refused("authenticates no server", enabled_cipher_suites=anonymous[0]["name"])


def test_a_plain_connection_checks_the_tls_options_too() -> None:
    # A failover list may mix amqp:// and amqps://; a wrong setting is wrong either way.
    with pytest.raises(jmspy.IllegalArgumentException, match="SEC-6"):
        jmspy.ConnectionFactory("amqp://localhost:5672?transport.enabledProtocols=TLSv1")
