"""Certificates the TLS tests make for themselves (the ``cryptography`` package), as PEM files.

A :class:`Pki` is one CA with certificates it signed for loopback (``127.0.0.1``, ``localhost``),
plus a second, unrelated CA with its own certificate: what a stranger who runs a TLS server or
client of their own would present.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_ONE_DAY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class Identity:
    cert: Path
    key: Path


@dataclass(frozen=True)
class Pki:
    ca: Path
    """PEM bundle of the cluster's CA (the truststore)."""
    node: Identity
    """Certificate of the cluster's processes (server and client use, 127.0.0.1/localhost)."""
    client: Identity
    """A REST client's certificate from the same CA."""
    other_ca: Path
    stranger: Identity
    """Signed by ``other_ca``: valid, but not trusted by the cluster."""
    encrypted_node_key: Path
    """``node``'s key, encrypted with :data:`KEY_PASSWORD`."""


KEY_PASSWORD = "s3cr3t-key-pass"


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path, password: str | None = None) -> None:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
    )
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)
    )
    path.chmod(0o600)


def _ca(directory: Path, name: str) -> tuple[Path, x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(_name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _ONE_DAY)
        .not_valid_after(now + 30 * _ONE_DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    path = directory / f"{name}.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path, cert, key


def _leaf(
    directory: Path,
    name: str,
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    hosts: tuple[str, ...] = ("127.0.0.1", "localhost"),
) -> tuple[Identity, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _ONE_DAY)
        .not_valid_after(now + 30 * _ONE_DAY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_key(key, key_path)
    return Identity(cert_path, key_path), key


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_cert, ca_key = _ca(directory, "cluster-ca")
    node, node_key = _leaf(directory, "node", ca_cert, ca_key)
    client, _ = _leaf(directory, "rest-client", ca_cert, ca_key, hosts=("client.example",))
    other_ca, other_cert, other_key = _ca(directory, "other-ca")
    stranger, _ = _leaf(directory, "stranger", other_cert, other_key)
    encrypted = directory / "node-encrypted.key"
    _write_key(node_key, encrypted, KEY_PASSWORD)
    return Pki(ca, node, client, other_ca, stranger, encrypted)


def internal_tls_config(pki: Pki) -> dict[str, str]:
    """``security.ssl.internal.*`` for every process of a test cluster (one node certificate)."""
    return {
        "security.ssl.internal.enabled": "true",
        "security.ssl.internal.cert": str(pki.node.cert),
        "security.ssl.internal.key": str(pki.node.key),
        "security.ssl.internal.truststore": str(pki.ca),
    }


def rest_tls_config(pki: Pki, mutual: bool = False) -> dict[str, str]:
    """``security.ssl.rest.*`` of the JobManager (and of a client that trusts it)."""
    out = {
        "security.ssl.rest.enabled": "true",
        "security.ssl.rest.cert": str(pki.node.cert),
        "security.ssl.rest.key": str(pki.node.key),
        "security.ssl.rest.truststore": str(pki.ca),
    }
    if mutual:
        out["security.ssl.rest.authentication-enabled"] = "true"
    return out
