"""Malformed and half-sent HTTP on a real session cluster: Flink's error body from the HTTP layer
itself, one log line (no traceback) per rejected request, half-sent requests timed out."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

from tests.security.conftest import SessionCluster, start_session_cluster, stop_session_cluster


def _exchange(port: int, raw: bytes, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes; the status, headers and body of the answer (the server closes after it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(raw)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def _malformed_requests() -> dict[str, bytes]:
    return {
        "70 KB URL": b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        "NUL in the path": b"GET /jobs\x00/overview HTTP/1.1\r\nHost: x\r\n\r\n",
        "bad header": b"GET /overview HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
        "bad chunk size": (
            b"POST /v1/jobs/00000000000000000000000000000000/savepoints HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
        ),
        "bad chunked upload": (
            b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n5\r\n--b\r\nXYZ\r\n"
        ),
        "not HTTP": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40 + b"\r\n\r\n",
    }


def test_malformed_requests_get_flinks_error_body(session_cluster: SessionCluster) -> None:
    cluster = session_cluster
    for name, raw in _malformed_requests().items():
        for _ in range(3):
            status, headers, body = _exchange(cluster.port, raw)
            assert 400 <= status < 500, (name, status, body[:200])
            assert headers.get("content-type") == "application/json; charset=UTF-8", (name, headers)
            errors = json.loads(body)["errors"]
            assert errors and all(isinstance(e, str) for e in errors), (name, body)
            assert "Traceback" not in body.decode(errors="replace")
    assert cluster.get("/overview")["taskmanagers"] == 2  # still serving
    time.sleep(0.5)
    log = cluster.log()
    assert "Traceback" not in log, log[-3000:]
    assert "Error handling request" not in log


def _closed_by_server(s: socket.socket) -> bool:
    try:
        return s.recv(1024) == b""
    except ConnectionResetError:
        return True


def _half_sent(port: int, timeout: float) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(b"GET /overview HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
    return s


def test_half_sent_requests_are_timed_out_and_capped_per_client(tmp_path: Path) -> None:
    cluster = start_session_cluster(
        tmp_path, **{"flott.rest.header-timeout": "5 s", "flott.rest.max-connections-per-client": "30"}
    )
    sockets: list[socket.socket] = []
    try:
        sockets += [_half_sent(cluster.port, 60) for _ in range(30)]
        for _ in range(5):  # over the cap: closed at once, long before the header timeout
            extra = _half_sent(cluster.port, 2.5)
            sockets.append(extra)
            assert _closed_by_server(extra)
        for s in sockets[:30]:
            assert _closed_by_server(s), "the server closes a connection whose headers never end"
        assert cluster.get("/overview")["taskmanagers"] == 2  # and serves again
    finally:
        for s in sockets:
            s.close()
        assert not stop_session_cluster(cluster)
