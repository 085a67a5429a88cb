"""A request whose body stalls is answered 408 and its connection closed; one that keeps arriving,
however slowly, is read to the end (``flott.rest.body-idle-timeout`` is a deadline per read).

The connection closes after aiohttp's lingering time (10 s, during which it reads and drops what the
client still sends, so that the client sees the 408 rather than a reset); these endpoints linger
1 s, and a test allows 5 s for the close."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

from tests.security.leaderless_endpoint import leaderless_endpoint


def _response(s: socket.socket, wait_for_close: bool = True) -> tuple[int, dict[str, object], bool]:
    """Status line, JSON body and whether the server closed the connection after it (not asked
    when ``wait_for_close`` is false: a kept-alive connection would only time out)."""
    raw = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            closed = True
            break
        raw += chunk
        head, _, body = raw.partition(b"\r\n\r\n")
        length = next(
            (
                int(v)
                for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")[1:])
                if k.lower() == b"content-length"
            ),
            None,
        )
        if length is not None and len(body) >= length:
            if not wait_for_close:
                closed = False
                break
            s.settimeout(5)
            try:
                closed = s.recv(1) == b""
            except TimeoutError:
                closed = False
            break
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), json.loads(body), closed


def _stalled(port: int, path: str, content_type: str, first: bytes, declared: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {declared}\r\n\r\n".encode()
        + first
    )
    return s


def test_a_stalled_json_body_gets_408_and_the_connection_is_closed(tmp_path: Path) -> None:
    with leaderless_endpoint(tmp_path, 1.0, **{"flott.rest.body-idle-timeout": "1 s"}) as endpoint:
        s = _stalled(endpoint.port, "/savepoint-disposal", "application/json", b'{"savepoint-pa', 200)
        try:
            status, body, closed = _response(s)
        finally:
            s.close()
        assert status == 408
        assert body["errors"][0].startswith("Request Timeout: the request body stopped arriving")
        assert "flott.rest.body-idle-timeout" in body["errors"][0]
        assert closed
        # and the endpoint serves the next client as before
        status, _, answer = endpoint.request("GET", "/config")
        assert status == 200 and "flink-version" in answer


def test_a_stalled_multipart_upload_gets_408_and_leaves_no_file(tmp_path: Path) -> None:
    upload_dir = tmp_path / "uploads"
    with leaderless_endpoint(upload_dir, 1.0, **{"flott.rest.body-idle-timeout": "1 s"}) as endpoint:
        first = (
            b'--b\r\nContent-Disposition: form-data; name="file_0"; filename="job.bin"\r\n'
            b"Content-Type: application/octet-stream\r\n\r\n" + b"x" * 1000
        )
        s = _stalled(endpoint.port, "/jobs", "multipart/form-data; boundary=b", first, 1_000_000)
        try:
            status, body, closed = _response(s)
        finally:
            s.close()
        assert status == 408, body
        assert closed
        assert endpoint.leftover_uploads() == []


def test_a_slow_body_that_keeps_arriving_is_read_to_the_end(tmp_path: Path) -> None:
    payload = json.dumps({"savepoint-path": "   ", "padding": "."}).encode()
    with leaderless_endpoint(tmp_path, 1.0, **{"flott.rest.body-idle-timeout": "1 s"}) as endpoint:
        s = _stalled(endpoint.port, "/savepoint-disposal", "application/json", b"", len(payload))
        try:
            for i in range(0, len(payload), 8):  # ~3 s in all, never 1 s without a byte
                s.sendall(payload[i : i + 8])
                time.sleep(0.4)
            status, body, _ = _response(s, wait_for_close=False)
        finally:
            s.close()
        # the whole body was read and judged (an unknown field is refused), not timed out
        assert status == 400, body
        assert "Request did not match expected format" in body["errors"][0]
