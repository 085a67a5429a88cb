"""TLS for flott's connections, from Flink's ``security.ssl.*`` keys (Flink: SSLUtils).

Two scopes, configured and switched on independently, as in Flink:

- **REST** (``security.ssl.rest.enabled``): the REST endpoint serves HTTPS; the CLI,
  :class:`~flott.client.rest_cluster_client.RestClusterClient` and the HA leader lookup's
  addresses use it and verify the server against ``security.ssl.rest.truststore`` (or the
  system's CAs when none is set), checking its host name unless ``security.ssl.verify-hostname``
  is false. ``security.ssl.rest.authentication-enabled`` makes the server require a client
  certificate signed by a CA of the truststore, and the clients present theirs.
- **Internal** (``security.ssl.internal.enabled``): RPC, data exchange and the BlobServer. Every
  connection is mutually authenticated: both sides present a certificate and verify the other's
  against ``security.ssl.internal.truststore``; a peer without a trusted certificate does not get
  past the handshake. As in Flink, internal connections do not check host names (one certificate
  may serve the whole cluster).

Why PEM and not Flink's Java keystores: Python's :mod:`ssl` (OpenSSL) reads PEM certificate
chains, keys and CA bundles; a JKS file cannot be read without a JVM. So flott takes, per scope,
``cert`` (certificate chain), ``key`` (private key), ``key-password`` (when the key is encrypted;
a secret, handed to child processes in the environment, never on a command line) and
``truststore`` (Flink's key, here a PEM CA bundle). Scope-less ``security.ssl.cert`` /
``.key`` / ``.key-password`` / ``.truststore`` are fallbacks for both scopes, as Flink's
scope-less keys are. Flink's keystore-only keys are refused with the PEM keys to use instead.

Contexts are built once per process and configuration (files are read at start-up, so a
missing or unreadable file is a :class:`~flott.errors.ConfigurationError` naming the key, not a
failure at the first connection); certificates are not reloaded (``security.ssl.reload`` is
refused).
"""

from __future__ import annotations

import functools
import logging
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from flott.configuration import Configuration
from flott.errors import ConfigurationError

Scope = Literal["rest", "internal"]

REST_ENABLED = "security.ssl.rest.enabled"
REST_AUTHENTICATION_ENABLED = "security.ssl.rest.authentication-enabled"
INTERNAL_ENABLED = "security.ssl.internal.enabled"
VERIFY_HOSTNAME = "security.ssl.verify-hostname"
PROTOCOL = "security.ssl.protocol"
INTERNAL_HANDSHAKE_TIMEOUT = "security.ssl.internal.handshake-timeout"

_FILE_KEYS = ("cert", "key", "key-password", "truststore")
_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


def key_of(scope: Scope, name: str) -> str:
    """``security.ssl.<scope>.<name>``."""
    return f"security.ssl.{scope}.{name}"


def rest_ssl_enabled(config: Configuration) -> bool:
    return config.get_bool(REST_ENABLED, False)


def internal_ssl_enabled(config: Configuration) -> bool:
    return config.get_bool(INTERNAL_ENABLED, False)


def rest_scheme(config: Configuration) -> str:
    """``https`` when the REST endpoint serves TLS, else ``http``."""
    return "https" if rest_ssl_enabled(config) else "http"


# -- what is refused ------------------------------------------------------------------------------


def _pem_hint(scope: str) -> str:
    p = f"security.ssl.{scope}." if scope else "security.ssl."
    return (
        f"flott reads PEM files, not Java keystores: set {p}cert (certificate chain), {p}key "
        f"(private key), {p}key-password (only if the key is encrypted) and {p}truststore "
        "(a PEM bundle of the CA certificates to trust)"
    )


def _refused_keys(scope: Scope) -> dict[str, str]:
    """Flink keys flott cannot honour when ``scope`` is on, with the reason shown."""
    out: dict[str, str] = {}
    for p, hint_scope in ((f"security.ssl.{scope}.", scope), ("security.ssl.", "")):
        for name in ("keystore", "keystore-password", "keystore-type"):
            out[p + name] = _pem_hint(hint_scope)
        out[p + "truststore-password"] = (
            f"{p}truststore is a PEM CA bundle in flott and has no password; remove this key"
        )
        out[p + "truststore-type"] = f"{p}truststore is always a PEM CA bundle in flott; remove this key"
    out[f"security.ssl.{scope}.cert.fingerprint"] = (
        "certificate pinning by fingerprint is not supported by flott; trust a dedicated CA "
        f"with security.ssl.{scope}.truststore instead"
    )
    out["security.ssl.algorithms"] = (
        "flott uses OpenSSL's cipher suites for the negotiated TLS version and cannot take Java "
        "cipher suite names; remove this key"
    )
    out["security.ssl.provider"] = "flott always uses Python's ssl module (OpenSSL); remove this key"
    if scope == "internal":
        for name in ("session-cache-size", "session-timeout", "close-notify-flush-timeout"):
            out[f"security.ssl.internal.{name}"] = "not supported by flott; remove this key"
    return out


def validate(config: Configuration) -> None:
    """Refuse, for each enabled scope, the Flink keys flott cannot honour (at start-up)."""
    scopes: list[Scope] = []
    if rest_ssl_enabled(config):
        scopes.append("rest")
    if internal_ssl_enabled(config):
        scopes.append("internal")
    for scope in scopes:
        for key, reason in _refused_keys(scope).items():
            if config.contains(key):
                raise ConfigurationError(f"{key} is not supported: {reason}")
    if scopes and config.get_bool(
        "security.ssl.reload", False
    ):
        raise ConfigurationError(
            "security.ssl.reload is not supported: flott reads its certificates at start-up; "
            "restart the processes to use new ones"
        )


# -- reading the files ------------------------------------------------------------------------


def _setting(config: Configuration, scope: Scope, name: str) -> tuple[str, str]:
    """(the key that gave it, its value) for ``name`` in ``scope``, falling back to the
    scope-less key; ("", "") when neither is set."""
    for key in (key_of(scope, name), f"security.ssl.{name}"):
        value = config.get(key, "").strip()
        if value:
            return key, value
    return "", ""


def _readable_file(config: Configuration, scope: Scope, name: str, why: str) -> tuple[str, str]:
    key, path = _setting(config, scope, name)
    if not key:
        raise ConfigurationError(f"{key_of(scope, name)} must be set: {why}")
    path = os.path.expanduser(path)
    if not os.path.isfile(path):
        raise ConfigurationError(f"{key}: {path} does not exist or is not a file")
    if not os.access(path, os.R_OK):
        raise ConfigurationError(f"{key}: {path} is not readable by this process")
    return key, path


def _load_identity(ctx: ssl.SSLContext, config: Configuration, scope: Scope, why: str) -> None:
    cert_key, cert = _readable_file(config, scope, "cert", why)
    key_key, key = _readable_file(config, scope, "key", why)
    password_key, password = _setting(config, scope, "key-password")
    password_name = key_of(scope, "key-password")
    try:
        with open(key, "rb") as f:
            encrypted = b"ENCRYPTED" in f.read(4096)
    except OSError as e:
        raise ConfigurationError(f"{key_key}: cannot read {key}: {e.strerror}") from None
    if encrypted and not password:
        # never let OpenSSL ask for the passphrase on a terminal
        raise ConfigurationError(f"{key_key}: the private key {key} is encrypted; set {password_name}")
    try:
        ctx.load_cert_chain(cert, key, password=(lambda: password) if encrypted else None)
    except ssl.SSLError as e:
        reason = (e.reason or str(e)).lower().replace("_", " ")
        if encrypted and ("decrypt" in reason or "pem lib" in reason or "password" in reason):
            raise ConfigurationError(
                f"{key_key}: cannot decrypt the private key {key} with {password_key}"
            ) from None
        if "key values mismatch" in reason:
            raise ConfigurationError(
                f"{key_key}: the private key {key} does not belong to the certificate {cert} ({cert_key})"
            ) from None
        raise ConfigurationError(
            f"{cert_key}/{key_key}: cannot load the certificate {cert} with the key {key} as PEM: "
            f"{e.reason or e}"
        ) from None


def _load_trust(ctx: ssl.SSLContext, config: Configuration, scope: Scope, why: str) -> None:
    key, path = _readable_file(config, scope, "truststore", why)
    try:
        ctx.load_verify_locations(cafile=path)
    except ssl.SSLError as e:
        raise ConfigurationError(
            f"{key}: {path} is not a PEM bundle of CA certificates ({e.reason or e}); "
            "flott does not read Java keystores"
        ) from None


def _set_protocol(ctx: ssl.SSLContext, config: Configuration) -> None:
    raw = config.get(PROTOCOL, "").strip()
    if not raw:
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        return
    version = _PROTOCOLS.get(raw)
    if version is None:
        raise ConfigurationError(f"{PROTOCOL}: expected one of {', '.join(_PROTOCOLS)}, got {raw!r}")
    ctx.minimum_version = ctx.maximum_version = version


# -- the contexts -------------------------------------------------------------------------------

log = logging.getLogger(__name__)


class _InternalServerSession(ssl.SSLObject):
    """A server-side TLS session that logs one line when a peer fails the handshake (asyncio
    and uvloop drop such connections silently): the operator sees who was turned away and why."""

    scope = "internal"

    def do_handshake(self) -> None:
        try:
            super().do_handshake()
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            raise
        except ssl.SSLError as e:
            log.warning("%s TLS: refused a connection: %s", self.scope, e.reason or e)
            raise


class _RestServerSession(_InternalServerSession):
    scope = "REST"


@dataclass(frozen=True)
class InternalSsl:
    """The contexts of every internal connection of one process (server and client side)."""

    server: ssl.SSLContext
    client: ssl.SSLContext
    handshake_timeout_s: float | None
    """``security.ssl.internal.handshake-timeout`` (None: asyncio's 60 s)."""


def _internal(config: Configuration) -> InternalSsl:
    why = "security.ssl.internal.enabled is true and every internal connection is mutually authenticated"
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client.check_hostname = False  # Flink's internal TLS: trust by CA (and client certificate), not by name
    for ctx in (server, client):
        _set_protocol(ctx, config)
        _load_identity(ctx, config, "internal", why)
        _load_trust(ctx, config, "internal", why)
        ctx.verify_mode = ssl.CERT_REQUIRED
    server.sslobject_class = _InternalServerSession
    timeout_ms = config.get_int(INTERNAL_HANDSHAKE_TIMEOUT, -1)
    return InternalSsl(server, client, timeout_ms / 1000.0 if timeout_ms > 0 else None)


def _rest_server(config: Configuration) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _set_protocol(ctx, config)
    why = "security.ssl.rest.enabled is true and the REST endpoint serves HTTPS"
    _load_identity(ctx, config, "rest", why)
    if config.get_bool(REST_AUTHENTICATION_ENABLED, False):
        _load_trust(
            ctx,
            config,
            "rest",
            f"{REST_AUTHENTICATION_ENABLED} is true: client certificates are verified against it",
        )
        ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.sslobject_class = _RestServerSession
    return ctx


def _rest_client(config: Configuration) -> ssl.SSLContext:
    if _setting(config, "rest", "truststore")[0]:
        # Only the configured CAs, as Flink's client trusts its truststore only.
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        _load_trust(ctx, config, "rest", "")
    else:
        ctx = ssl.create_default_context()  # a certificate from a public CA: the system's CAs
    _set_protocol(ctx, config)
    ctx.check_hostname = config.get_bool(VERIFY_HOSTNAME, True)
    ctx.verify_mode = ssl.CERT_REQUIRED
    if rest_ssl_enabled(config) and config.get_bool(REST_AUTHENTICATION_ENABLED, False):
        _load_identity(
            ctx, config, "rest", f"{REST_AUTHENTICATION_ENABLED} is true: the client presents a certificate"
        )
    return ctx


def _relevant(config: Configuration) -> tuple[tuple[str, str], ...]:
    values: Mapping[str, str] = config.to_dict()
    return tuple(sorted((k, v) for k, v in values.items() if k.startswith("security.ssl.")))


@functools.lru_cache(maxsize=8)
def _cached(kind: str, entries: tuple[tuple[str, str], ...]) -> InternalSsl | ssl.SSLContext:
    config = Configuration(dict(entries))
    validate(config)
    if kind == "internal":
        return _internal(config)
    if kind == "rest-server":
        return _rest_server(config)
    return _rest_client(config)


def internal_ssl(config: Configuration) -> InternalSsl | None:
    """The internal contexts, or None when ``security.ssl.internal.enabled`` is false."""
    if not internal_ssl_enabled(config):
        return None
    result = _cached("internal", _relevant(config))
    assert isinstance(result, InternalSsl)
    return result


def rest_server_ssl(config: Configuration) -> ssl.SSLContext | None:
    """The REST endpoint's context, or None when ``security.ssl.rest.enabled`` is false."""
    if not rest_ssl_enabled(config):
        return None
    result = _cached("rest-server", _relevant(config))
    assert isinstance(result, ssl.SSLContext)
    return result


def rest_client_ssl(config: Configuration) -> ssl.SSLContext:
    """The context a REST client uses for an ``https`` address (whether or not the cluster's
    configuration enables REST TLS: an ``https://`` address is verified all the same)."""
    result = _cached("rest-client", _relevant(config))
    assert isinstance(result, ssl.SSLContext)
    return result


def describe_verification_error(error: BaseException, address: str) -> str:
    """A one-line explanation of a failed TLS handshake with ``address`` (client side)."""
    if isinstance(error, ssl.SSLCertVerificationError):
        detail = error.verify_message or error.reason or str(error)
        return (
            f"the certificate of {address} could not be verified ({detail}); check "
            "security.ssl.rest.truststore (the CA bundle that signed the server's certificate)"
            + (" and the host name in the certificate" if "hostname" in str(detail).lower() else "")
        )
    reason = getattr(error, "reason", None) or str(error)
    if "certificate required" in str(reason).lower() or "alert" in str(reason).lower():
        return (
            f"{address} refused the TLS handshake ({reason}); it may require a client certificate "
            "(security.ssl.rest.authentication-enabled, security.ssl.rest.cert/key) signed by a CA it trusts"
        )
    return f"TLS handshake with {address} failed: {reason}"


def closed_without_answer_hint(url: str) -> str:
    """What to add when an ``https`` server closed the connection without answering: a TLS 1.3
    server that refuses a client's certificate (or its absence) after the handshake just closes
    (asyncio does not flush the alert), so the client cannot tell this from a server going away."""
    if not url.startswith("https:"):
        return ""
    return (
        "; if the endpoint requires client certificates (security.ssl.rest.authentication-enabled), "
        "this client's certificate (security.ssl.rest.cert/key) is missing or not signed by a CA it trusts"
    )
