"""``security.ssl.*`` read into SSL contexts: what is accepted, what is refused and how it says so,
and the contexts doing real handshakes over loopback sockets."""

from __future__ import annotations

import asyncio
import logging
import ssl
from pathlib import Path

import pytest

from flott.configuration import Configuration
from flott.errors import ConfigurationError
from flott.ssl_context import internal_ssl, rest_client_ssl, rest_server_ssl
from tests.security.tls.certificates import KEY_PASSWORD, Pki, internal_tls_config, rest_tls_config


def _config(values: dict[str, str]) -> Configuration:
    return Configuration(values)


def test_disabled_scopes_build_nothing(pki: Pki) -> None:
    config = _config({"security.ssl.internal.keystore": "/x.jks"})  # ignored while off, as in Flink
    assert internal_ssl(config) is None
    assert rest_server_ssl(config) is None


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("security.ssl.internal.keystore", "security.ssl.internal.cert"),
        ("security.ssl.internal.keystore-password", "PEM files, not Java keystores"),
        ("security.ssl.keystore", "security.ssl.cert"),
        ("security.ssl.internal.truststore-password", "has no password"),
        ("security.ssl.algorithms", "cipher suite names"),
        ("security.ssl.internal.cert.fingerprint", "not supported"),
    ],
)
def test_java_keystore_keys_are_refused_with_the_pem_keys_to_use(pki: Pki, key: str, expected: str) -> None:
    config = _config({**internal_tls_config(pki), key: "whatever"})
    with pytest.raises(ConfigurationError) as e:
        internal_ssl(config)
    assert key in str(e.value) and expected in str(e.value)


def test_rest_keystore_is_refused(pki: Pki) -> None:
    config = _config({**rest_tls_config(pki), "security.ssl.rest.keystore": "/etc/flink/rest.jks"})
    with pytest.raises(ConfigurationError, match=r"security\.ssl\.rest\.cert .*security\.ssl\.rest\.key"):
        rest_server_ssl(config)


def test_missing_and_unreadable_files_name_the_key(pki: Pki, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"security\.ssl\.internal\.truststore must be set"):
        internal_ssl(_config({**internal_tls_config(pki), "security.ssl.internal.truststore": ""}))
    missing = tmp_path / "nope.pem"
    with pytest.raises(ConfigurationError, match=rf"security\.ssl\.internal\.cert: {missing} does not exist"):
        internal_ssl(_config({**internal_tls_config(pki), "security.ssl.internal.cert": str(missing)}))
    jks = tmp_path / "truststore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02 not pem")
    with pytest.raises(ConfigurationError, match="is not a PEM bundle of CA certificates"):
        internal_ssl(_config({**internal_tls_config(pki), "security.ssl.internal.truststore": str(jks)}))
    with pytest.raises(ConfigurationError, match="does not belong to the certificate"):
        internal_ssl(_config({**internal_tls_config(pki), "security.ssl.internal.key": str(pki.client.key)}))


def test_encrypted_key_needs_its_password(pki: Pki) -> None:
    values = {**internal_tls_config(pki), "security.ssl.internal.key": str(pki.encrypted_node_key)}
    with pytest.raises(ConfigurationError, match=r"is encrypted; set security\.ssl\.internal\.key-password"):
        internal_ssl(_config(values))
    with pytest.raises(ConfigurationError, match=r"cannot decrypt .*with security\.ssl\.internal\.key-pass"):
        internal_ssl(_config({**values, "security.ssl.internal.key-password": "wrong"}))
    assert internal_ssl(_config({**values, "security.ssl.internal.key-password": KEY_PASSWORD})) is not None


def test_scope_less_keys_are_fallbacks(pki: Pki) -> None:
    config = _config(
        {
            "security.ssl.internal.enabled": "true",
            "security.ssl.cert": str(pki.node.cert),
            "security.ssl.key": str(pki.node.key),
            "security.ssl.truststore": str(pki.ca),
        }
    )
    assert internal_ssl(config) is not None


def test_protocol_is_pinned_when_set(pki: Pki) -> None:
    tls = internal_ssl(_config({**internal_tls_config(pki), "security.ssl.protocol": "TLSv1.3"}))
    assert tls is not None
    assert tls.server.minimum_version == tls.server.maximum_version == ssl.TLSVersion.TLSv1_3
    with pytest.raises(ConfigurationError, match=r"security\.ssl\.protocol"):
        internal_ssl(_config({**internal_tls_config(pki), "security.ssl.protocol": "SSLv3"}))


async def _handshake(server_ctx: ssl.SSLContext, client_ctx: ssl.SSLContext) -> str:
    """Connect a client to a TLS echo server on loopback; what came back, or the error's name."""

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            writer.write(await reader.readexactly(4))
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0, ssl=server_ctx)
    port = server.sockets[0].getsockname()[1]
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_ctx)
        writer.write(b"ping")
        data = await reader.read(4)
        writer.close()
        return data.decode() or "closed"
    except (ssl.SSLError, OSError) as e:
        return type(e).__name__
    finally:
        server.close()
        await server.wait_closed()


def test_internal_contexts_authenticate_both_sides(pki: Pki, caplog: pytest.LogCaptureFixture) -> None:
    ours = internal_ssl(_config(internal_tls_config(pki)))
    stranger = internal_ssl(
        _config(
            {
                **internal_tls_config(pki),
                "security.ssl.internal.cert": str(pki.stranger.cert),
                "security.ssl.internal.key": str(pki.stranger.key),
            }
        )
    )
    assert ours is not None and stranger is not None
    assert asyncio.run(_handshake(ours.server, ours.client)) == "ping"
    # a client whose certificate another CA signed: the server refuses it, in one log line
    with caplog.at_level(logging.WARNING, logger="flott.ssl_context"):
        assert asyncio.run(_handshake(ours.server, stranger.client)) != "ping"
    assert [r.getMessage() for r in caplog.records] == [
        "internal TLS: refused a connection: CERTIFICATE_VERIFY_FAILED"
    ]
    # a client without any certificate
    anonymous = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    anonymous.load_verify_locations(pki.ca)
    anonymous.check_hostname = False
    assert asyncio.run(_handshake(ours.server, anonymous)) != "ping"
    # a server whose certificate another CA signed: the client refuses it
    assert asyncio.run(_handshake(stranger.server, ours.client)) == "SSLCertVerificationError"


def test_rest_client_checks_the_host_name(pki: Pki) -> None:
    server = rest_server_ssl(_config(rest_tls_config(pki)))
    assert server is not None
    client = rest_client_ssl(_config({"security.ssl.rest.truststore": str(pki.ca)}))
    assert client.check_hostname and client.verify_mode == ssl.CERT_REQUIRED
    assert asyncio.run(_handshake(server, client)) == "ping"  # 127.0.0.1 is in the certificate
    wrong_ca = rest_client_ssl(_config({"security.ssl.rest.truststore": str(pki.other_ca)}))
    assert asyncio.run(_handshake(server, wrong_ca)) == "SSLCertVerificationError"
