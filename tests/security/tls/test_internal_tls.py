"""``security.ssl.internal.*``: RPC, data exchange and the BlobServer over mutually authenticated
TLS. A job runs end to end across two TaskExecutors; a plaintext peer, a peer without a
certificate and one with a certificate from another CA are refused on every internal port, and
the cluster keeps running."""

from __future__ import annotations

import socket
import ssl
import struct
from pathlib import Path
from typing import Protocol

import msgspec
import psutil
import pytest

from flott.configuration import Configuration
from flott.errors import RpcConnectionError, RpcTimeoutError
from flott.runtime.io.network import protocol as data_protocol
from flott.runtime.rpc.service import RpcEndpoint, RpcService
from flott.ssl_context import InternalSsl, internal_ssl
from tests.security.conftest import free_port, start_session_cluster, stop_session_cluster
from tests.security.tls.certificates import KEY_PASSWORD, Pki, internal_tls_config
from tests.security.tls.conftest import flott
from tests.security.tls.jobs import read_counts, write_input, write_program


def _tls(pki: Pki, cert: Path | None = None, key: Path | None = None) -> InternalSsl:
    values = internal_tls_config(pki)
    if cert is not None and key is not None:
        values |= {"security.ssl.internal.cert": str(cert), "security.ssl.internal.key": str(key)}
    tls = internal_ssl(Configuration(values))
    assert tls is not None
    return tls


class Echo(RpcEndpoint):
    endpoint_id = "echo"

    async def echo(self, value: str) -> str:
        return value


class EchoGateway(Protocol):
    async def echo(self, value: str) -> str: ...


async def test_rpc_between_trusted_services_only(pki: Pki) -> None:
    server = RpcService(tls=_tls(pki))
    server.register(Echo())
    await server.start()
    trusted = RpcService(tls=_tls(pki))
    plaintext = RpcService()
    stranger = RpcService(tls=_tls(pki, pki.stranger.cert, pki.stranger.key))
    try:
        assert await trusted.connect(server.address, "echo", EchoGateway).echo("hi") == "hi"
        for intruder in (plaintext, stranger):
            with pytest.raises((RpcConnectionError, RpcTimeoutError)):
                await intruder.connect(server.address, "echo", EchoGateway, timeout=5).echo("let me in")
        # the server still serves the trusted caller, on its existing and on a new connection
        assert await trusted.connect(server.address, "echo", EchoGateway).echo("still") == "still"
        fresh = RpcService(tls=_tls(pki))
        assert await fresh.connect(server.address, "echo", EchoGateway).echo("new") == "new"
        await fresh.stop()
    finally:
        for service in (trusted, plaintext, stranger, server):
            await service.stop()


# -- probes of a running cluster ----------------------------------------------------------------


def _rpc_frame() -> bytes:
    """An RPC request (to an endpoint that does not exist): a server that accepted it answers."""
    payload = msgspec.msgpack.encode([1, "no-such-endpoint", "hello", [], None])
    return struct.pack("!I", len(payload)) + payload


def _blob_request() -> bytes:
    return b"GET " + b"0" * 32 + b" " + b"0" * 64 + b"\n"  # answered ERR by a server that accepted it


def _data_frame() -> bytes:
    return data_protocol.HEADER.pack(0, 99, 1)  # an unknown message type: answered with an error frame


def _client_context(pki: Pki, identity: tuple[Path, Path] | None) -> ssl.SSLContext:
    """A TLS client that trusts the cluster's CA and presents ``identity`` (or no certificate)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations(pki.ca)
    if identity is not None:
        ctx.load_cert_chain(*identity)
    return ctx


def _probe(port: int, request: bytes, ctx: ssl.SSLContext | None) -> str:
    """``answered`` when the server accepted the connection and answered the request; else how it
    was turned away."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        sock: socket.socket = raw if ctx is None else ctx.wrap_socket(raw)
        sock.sendall(request)
        data = sock.recv(4096)
    except ssl.SSLError as e:
        return f"refused ({e.reason})"
    except OSError as e:
        return f"closed ({e})"
    finally:
        raw.close()
    if not data:
        return "closed"
    if ctx is None and data[:1] == b"\x15":  # a TLS alert record: the server only speaks TLS
        return "TLS alert"
    return "answered"


def test_job_across_task_executors_and_intruders_refused(
    pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_dir = tmp_path / "log"
    monkeypatch.setenv("FLOTT_LOG_DIR", str(log_dir))
    blob_port = free_port()
    cluster = start_session_cluster(
        tmp_path, task_managers=2, **internal_tls_config(pki), **{"blob.server.port": str(blob_port)}
    )
    try:
        data_ports = [tm["dataPort"] for tm in cluster.get("/taskmanagers")["taskmanagers"]]
        assert len(data_ports) == 2
        ports = {
            "RPC": (cluster.rpc_port, _rpc_frame()),
            "BlobServer": (blob_port, _blob_request()),
            "data exchange": (data_ports[0], _data_frame()),
        }
        trusted = _client_context(pki, (pki.node.cert, pki.node.key))
        anonymous = _client_context(pki, None)
        stranger = _client_context(pki, (pki.stranger.cert, pki.stranger.key))
        for name, (port, request) in ports.items():
            assert _probe(port, request, trusted) == "answered", name  # the probe itself works
            for who, ctx in (("plaintext", None), ("no certificate", anonymous), ("other CA", stranger)):
                outcome = _probe(port, request, ctx)
                assert outcome != "answered", f"{name} answered a {who} peer"

        # each refusal is one log line (in the JobManager's or the TaskExecutor's log), no traceback
        def refusals() -> list[str]:
            text = "".join(f.read_text(errors="replace") for f in log_dir.glob("*.log"))
            assert "Traceback" not in text
            return [line for line in text.splitlines() if "internal TLS: refused a connection" in line]

        cluster.wait_for("9 refusals logged", lambda: len(refusals()) == 9, timeout=20)

        # the cluster is unharmed: both TaskManagers are there and a job runs across them
        assert cluster.get("/overview")["taskmanagers"] == 2
        program, splitter = write_program(tmp_path / "job")
        expected = write_input(tmp_path / "words.txt", lines=2000)
        out = tmp_path / "counts"
        address = f"127.0.0.1:{cluster.port}"
        run = flott(
            "run",
            "-m",
            address,
            "-pyfs",
            str(splitter),
            str(program),
            str(tmp_path / "words.txt"),
            str(out),
            cwd=tmp_path,
        )
        assert run.returncode == 0, run.stderr + cluster.log()[-3000:]
        assert read_counts(out) == expected
        [job] = cluster.get("/jobs/overview")["jobs"]
        assert job["state"] == "FINISHED"
    finally:
        assert not stop_session_cluster(cluster)


def test_key_password_reaches_task_executors_off_the_command_line(
    pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An encrypted key: its password is in config.yaml; the TaskExecutors decrypt the key (they
    register over TLS) though the password is on no process's command line."""
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    (conf_dir / "config.yaml").write_text(f"security.ssl.internal.key-password: {KEY_PASSWORD}\n")
    monkeypatch.setenv("FLOTT_CONF_DIR", str(conf_dir))
    tls = {**internal_tls_config(pki), "security.ssl.internal.key": str(pki.encrypted_node_key)}
    cluster = start_session_cluster(tmp_path, task_managers=1, **tls)
    try:
        workers = cluster.task_executor_processes()
        assert len(workers) == 1
        for proc in [psutil.Process(cluster.jobmanager.pid), *workers]:
            assert KEY_PASSWORD not in " ".join(proc.cmdline())
        assert cluster.get("/overview")["taskmanagers"] == 1
        shown = {e["key"]: e["value"] for e in cluster.get("/jobmanager/config")}
        assert shown["security.ssl.internal.key-password"] == "******"
    finally:
        assert not stop_session_cluster(cluster)
