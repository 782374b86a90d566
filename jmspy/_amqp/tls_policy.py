"""Which TLS protocol versions and cipher suites a connection offers (rule SEC-6).

Qpid JMS's ``transport.enabledProtocols``, ``transport.disabledProtocols``,
``transport.enabledCipherSuites`` and ``transport.disabledCipherSuites`` (comma-separated
lists, Java's names) resolved against Python's ``ssl`` module, as Java resolves them against
its SSLEngine: the enabled list (by default what the context offers) minus the disabled one.

Where jmspy differs, it says so with an IllegalArgumentException when the factory is made,
before any connection:

* jmspy offers TLSv1.2 and TLSv1.3 only (RFC 8996 retired the versions below): naming an
  older one among the enabled protocols is refused; among the disabled ones it is accepted
  (Qpid JMS's default, ``SSLv2Hello,SSLv3``, is jmspy's too) and changes nothing.
* Python's ``ssl`` sets a range of versions (minimum and maximum), so the versions left must
  be one or both of the two; nothing left is refused.
* Cipher suites take Java's (IANA) names, ``TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384``, or
  OpenSSL's, ``ECDHE-RSA-AES256-GCM-SHA384``; TLS 1.3 suites have the same name in both. A
  name this Python's OpenSSL does not know, and an anonymous suite (no server
  authentication), are refused.
* Python's ``ssl`` cannot choose among the TLS 1.3 suites (OpenSSL's ``SSL_CTX_set_ciphersuites``
  is not exposed): a list that keeps some of them but not all is refused; one that keeps none
  leaves TLSv1.3 out, as Java does when no enabled suite serves it. Likewise a list with no
  TLS 1.2 suite leaves TLSv1.2 out.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = ["OFFERED_PROTOCOLS", "TlsPolicy", "TlsPolicyError", "iana_name", "resolve"]

# What jmspy offers, oldest first.
OFFERED_PROTOCOLS = ("TLSv1.2", "TLSv1.3")
_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
# Java's names of the versions below jmspy's floor.
_RETIRED = ("SSLv2Hello", "SSLv3", "TLSv1", "TLSv1.1")

_RULE = "[rule SEC-6]"


class TlsPolicyError(ValueError):
    """A setting that cannot be honoured; the text names the option, the value and why."""


@dataclass(frozen=True)
class TlsPolicy:
    """The protocol range and the TLS 1.2 cipher list a client context gets."""

    protocols: tuple[str, ...]  # one or both of OFFERED_PROTOCOLS, oldest first
    ciphers: str | None  # an OpenSSL cipher list for TLS 1.2; None: Python's defaults

    def apply(self, context: ssl.SSLContext) -> None:
        context.minimum_version = _VERSIONS[self.protocols[0]]
        context.maximum_version = _VERSIONS[self.protocols[-1]]
        if self.ciphers is not None:
            context.set_ciphers(self.ciphers)


def resolve(
    enabled_protocols: str | None,
    disabled_protocols: str | None,
    enabled_suites: str | None,
    disabled_suites: str | None,
) -> TlsPolicy:
    """The policy the four options describe (None: the option is not given)."""
    protocols = _protocols(enabled_protocols, disabled_protocols)
    if enabled_suites is None and disabled_suites is None:
        return TlsPolicy(protocols, None)
    catalogue = _catalogue()
    if enabled_suites is not None:
        chosen = _suites(enabled_suites, "transport.enabledCipherSuites", catalogue)
    else:
        chosen = list(_default_suites())
    if disabled_suites is not None:
        dropped = set(_suites(disabled_suites, "transport.disabledCipherSuites", catalogue))
        chosen = [name for name in chosen if name not in dropped]
    given = _given(enabled_suites, disabled_suites)
    tls13 = {name for name in chosen if catalogue[name] == "TLSv1.3"}
    all13 = {name for name, protocol in catalogue.items() if protocol == "TLSv1.3"}
    if tls13 and tls13 != all13:
        raise TlsPolicyError(
            f"{given}: keeps the TLS 1.3 cipher suites {', '.join(sorted(tls13))} but not "
            f"{', '.join(sorted(all13 - tls13))}; Python's ssl module cannot choose among the "
            "TLS 1.3 suites (it offers all of them or, with TLSv1.3 left out, none): list all "
            f"of them or none {_RULE}"
        )
    tls12 = [name for name in chosen if catalogue[name] != "TLSv1.3"]
    kept = tuple(p for p in protocols if (p == "TLSv1.3" and tls13) or (p == "TLSv1.2" and tls12))
    if not kept:
        raise TlsPolicyError(
            f"{given}: no cipher suite is left for the protocols enabled "
            f"({', '.join(protocols)}) {_RULE}"
        )
    return TlsPolicy(kept, ":".join(tls12) if "TLSv1.2" in kept else None)


def _given(enabled: str | None, disabled: str | None) -> str:
    parts = []
    if enabled is not None:
        parts.append(f"transport.enabledCipherSuites={enabled!r}")
    if disabled is not None:
        parts.append(f"transport.disabledCipherSuites={disabled!r}")
    return " with ".join(parts)


def _names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def _protocols(enabled: str | None, disabled: str | None) -> tuple[str, ...]:
    canonical = {name.lower(): name for name in (*OFFERED_PROTOCOLS, *_RETIRED)}

    def parse(value: str, option: str) -> list[str]:
        names = []
        for name in _names(value):
            known = canonical.get(name.lower())
            if known is None:
                raise TlsPolicyError(
                    f"{option}={value!r}: {name!r} is not a protocol name; use "
                    f"{' and '.join(OFFERED_PROTOCOLS)} (Java's names) {_RULE}"
                )
            names.append(known)
        return names

    chosen = list(OFFERED_PROTOCOLS)
    if enabled is not None:
        chosen = parse(enabled, "transport.enabledProtocols")
        retired = [name for name in chosen if name in _RETIRED]
        if retired:
            raise TlsPolicyError(
                f"transport.enabledProtocols={enabled!r}: jmspy does not offer "
                f"{', '.join(retired)} (retired by RFC 8996); it offers "
                f"{' and '.join(OFFERED_PROTOCOLS)} {_RULE}"
            )
        if not chosen:
            raise TlsPolicyError(
                f"transport.enabledProtocols={enabled!r}: names no protocol {_RULE}"
            )
    if disabled is not None:
        off = set(parse(disabled, "transport.disabledProtocols"))
        chosen = [name for name in chosen if name not in off]
    kept = tuple(name for name in OFFERED_PROTOCOLS if name in chosen)
    if not kept:
        raise TlsPolicyError(
            f"transport.enabledProtocols={enabled!r} with transport.disabledProtocols="
            f"{disabled!r}: no protocol is left {_RULE}"
        )
    return kept


def _suites(value: str, option: str, catalogue: dict[str, str]) -> list[str]:
    """The OpenSSL names of the suites ``value`` lists (Java's or OpenSSL's names)."""
    by_iana = _iana_to_openssl()
    names = []
    for name in _names(value):
        openssl = name if name in catalogue else by_iana.get(name)
        if openssl is None:
            if name in _anonymous():
                raise TlsPolicyError(
                    f"{option}={value!r}: {name!r} authenticates no server (an anonymous "
                    f"suite); jmspy does not offer it {_RULE}"
                )
            raise TlsPolicyError(
                f"{option}={value!r}: {name!r} is not a cipher suite this Python's "
                f"{ssl.OPENSSL_VERSION} offers; give Java's (IANA) or OpenSSL's name, e.g. "
                f"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 or ECDHE-RSA-AES256-GCM-SHA384 {_RULE}"
            )
        names.append(openssl)
    if not names:
        raise TlsPolicyError(f"{option}={value!r}: names no cipher suite {_RULE}")
    return names


@cache
def _all_ciphers() -> tuple[dict[str, Any], ...]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.set_ciphers("ALL")
    ciphers: list[Any] = context.get_ciphers()  # typeshed's _Cipher TypedDicts
    return tuple(ciphers)


@cache
def _catalogue() -> dict[str, str]:
    """OpenSSL name -> protocol ("TLSv1.3", "TLSv1.2", ...) of every suite that authenticates
    the server."""
    return {c["name"]: c["protocol"] for c in _all_ciphers() if c.get("auth") != "auth-null"}


@cache
def _anonymous() -> frozenset[str]:
    names = set()
    for c in _all_ciphers():
        if c.get("auth") == "auth-null":
            names.add(c["name"])
            iana = iana_name(c, anonymous=True)
            if iana:
                names.add(iana)
    return frozenset(names)


@cache
def _iana_to_openssl() -> dict[str, str]:
    mapping = {}
    for c in _all_ciphers():
        iana = iana_name(c)
        if iana and c["name"] in _catalogue():
            mapping[iana] = c["name"]
    return mapping


@cache
def _default_suites() -> tuple[str, ...]:
    """What a default client context offers (Python's secure cipher defaults)."""
    return tuple(c["name"] for c in ssl.create_default_context().get_ciphers())


_KX = {"kx-ecdhe": "ECDHE", "kx-dhe": "DHE", "kx-rsa": "RSA"}
_AUTH = {"auth-rsa": "RSA", "auth-ecdsa": "ECDSA", "auth-dss": "DSS"}
_DIGEST = {"sha1": "SHA", "sha256": "SHA256", "sha384": "SHA384"}


def iana_name(cipher: dict[str, Any], anonymous: bool = False) -> str | None:
    """Java's (the IANA registry's) name of a suite from ``SSLContext.get_ciphers()``, or None
    where it cannot be told from the fields (PSK, SRP and other rare suites: those take their
    OpenSSL name)."""
    name = str(cipher["name"])
    if cipher.get("protocol") == "TLSv1.3":
        return name
    kx = _KX.get(str(cipher.get("kea")))
    auth = str(cipher.get("auth"))
    if kx is None:
        return None
    if auth == "auth-null":
        if not anonymous or kx == "RSA":
            return None
        prefix = f"TLS_{kx[:-1]}_anon_WITH_"  # ECDH_anon, DH_anon
    elif kx == "RSA":
        if auth != "auth-rsa":
            return None
        prefix = "TLS_RSA_WITH_"
    elif auth in _AUTH:
        prefix = f"TLS_{kx}_{_AUTH[auth]}_WITH_"
    else:
        return None
    symmetric = str(cipher.get("symmetric") or "")
    if symmetric == "chacha20-poly1305":
        return f"{prefix}CHACHA20_POLY1305_SHA256"
    if symmetric == "des-ede3-cbc":
        bulk = "3DES_EDE_CBC"
    else:
        parts = symmetric.split("-")
        if len(parts) != 3 or not parts[1].isdigit():
            return None
        algorithm, bits, mode = parts
        bulk = f"{algorithm.upper()}_{bits}_{mode.upper()}"
    if bulk.endswith("_CCM"):  # no MAC in the name; CCM_8 is OpenSSL's CCM8
        return f"{prefix}{bulk}_8" if name.endswith("CCM8") else f"{prefix}{bulk}"
    if cipher.get("aead"):
        mac = name.rsplit("-", 1)[-1]
        if mac not in ("SHA256", "SHA384"):
            return None
        return f"{prefix}{bulk}_{mac}"
    digest = _DIGEST.get(str(cipher.get("digest")))
    return f"{prefix}{bulk}_{digest}" if digest else None
