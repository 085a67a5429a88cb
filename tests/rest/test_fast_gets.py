"""The fast path for ``GET /overview`` and ``GET /jobs/overview`` (flott.rest.fast_gets): the same
bytes on the wire as aiohttp's path, and everything that is not plainly such a GET (malformed,
oversized, partial, a body, ``Connection: close``) answered by aiohttp as before, also on a
connection that the fast path served first.

Two endpoints serve one cluster: the default one, and one with every request through aiohttp
(``fast_gets=False``); a client that sends the same bytes to both must get the same bytes back.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator

import pytest

from flott.client.rest_cluster_client import RestClusterClient
from flott.rest.fast_gets import FastGets
from flott.rest.webmonitor.rest_server_endpoint import RestServerEndpoint
from tests.rest.conftest import make_config, start_rest_cluster
from tests.rest.jobs import bounded_job, failing_job

DATE = re.compile(rb"\r\nDate: [^\r]*\r\n")


async def exchange(port: int, *sends: bytes, pause: float = 0.05, read_for: float = 0.5) -> bytes:
    """Send ``sends`` on one connection (``pause`` s apart) and return all that came back
    within ``read_for`` s after the last (or until the server closed)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for data in sends:
            writer.write(data)
            await writer.drain()
            await asyncio.sleep(pause)
        out = b""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + read_for
        while (left := deadline - loop.time()) > 0:
            try:
                chunk = await asyncio.wait_for(reader.read(1 << 20), left)
            except TimeoutError:
                break
            if not chunk:
                out += b"<closed>"
                break
            out += chunk
        return out
    finally:
        writer.close()


def same(a: bytes, b: bytes) -> bool:
    return DATE.sub(b"\r\nDate: -\r\n", a) == DATE.sub(b"\r\nDate: -\r\n", b)


@pytest.fixture
async def two_endpoints(no_leftover_processes: None) -> AsyncIterator[tuple[int, int, FastGets]]:
    config = make_config()
    cluster, fast = await start_rest_cluster(config, num_task_managers=1)
    plain = RestServerEndpoint(config, cluster.dispatcher_gateway, fast_gets=False, lingering_time_s=0.2)
    await plain.start()
    assert fast.fast_gets is not None and plain.fast_gets is None
    try:
        yield fast.port, plain.port, fast.fast_gets
    finally:
        await plain.stop()
        await fast.stop()
        await cluster.close()


async def both(
    ports: tuple[int, int] | tuple[int, int, FastGets], *sends: bytes, read_for: float = 0.5
) -> tuple[bytes, bytes]:
    return (
        await exchange(ports[0], *sends, read_for=read_for),
        await exchange(ports[1], *sends, read_for=read_for),
    )


GET = b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n"


async def test_answers_are_byte_identical(two_endpoints: tuple[int, int, FastGets]) -> None:
    table = two_endpoints[2]
    for path in (b"/overview", b"/jobs/overview", b"/v1/overview", b"/v1/jobs/overview"):
        before = table.answered
        fast, plain = await both(two_endpoints, GET % path)
        assert table.answered == before + 1
        assert fast.startswith(b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=UTF-8\r\n")
        assert same(fast, plain), (fast, plain)
    # several in one write (pipelined) and then more on the same connection: in order, all answered
    fast, plain = await both(
        two_endpoints, GET % b"/overview" + GET % b"/jobs/overview", GET % b"/v1/jobs/overview"
    )
    assert fast.count(b"HTTP/1.1 200 OK") == 3 and same(fast, plain)
    assert table.answered == before + 4
    assert fast.index(b'"taskmanagers"') < fast.index(b'{"jobs":[')


async def test_what_is_not_a_plain_fast_get_goes_to_aiohttp(two_endpoints: tuple[int, int, FastGets]) -> None:
    cases: list[tuple[bytes, ...]] = [
        # another route after fast answers on the same connection, then a fast path again
        (GET % b"/overview", GET % b"/config", GET % b"/jobs/overview"),
        # a malformed request line after a fast answer
        (GET % b"/overview", b"GET /overview HTTP/1.1 junk\r\nHost: x\r\n\r\n"),
        (b"GARBAGE\r\n\r\n",),
        # a header line too long for aiohttp, and one with a control character
        (b"GET /overview HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n",),
        (b"GET /jobs/overview HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n",),
        # a body on the GET (the Flink CLI sends {}), Connection: close, HTTP/1.0, a query string
        (b"GET /jobs/overview HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", GET % b"/overview"),
        (b"GET /overview HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", GET % b"/overview"),
        (b"GET /overview HTTP/1.0\r\nHost: x\r\n\r\n",),
        (b"GET /jobs/overview?x=1 HTTP/1.1\r\nHost: x\r\n\r\n",),
        # sent in pieces (a slow client), and a foreign origin and host (the browser checks)
        (b"GET /overview HTT", b"P/1.1\r\nHost: x\r\n", b"\r\n"),
        (b"GET /overview HTTP/1.1\r\nHost: evil.example\r\nOrigin: http://evil.example\r\n\r\n",),
        # a repeated header, a method the route does not take
        (b"GET /overview HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",),
        (b"POST /overview HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",),
    ]
    table = two_endpoints[2]
    for sends in cases:
        before = table.answered
        fast, plain = await both(two_endpoints, *sends)
        assert fast and same(fast, plain), (sends, fast, plain)
        # only the plain GETs that come before anything else are answered on the fast path
        assert table.answered - before == (1 if sends[0] == GET % b"/overview" else 0), sends


async def test_a_client_that_does_not_read_is_not_buffered_without_bound(
    two_endpoints: tuple[int, int, FastGets],
) -> None:
    """Requests pipelined by a client that reads nothing: the endpoint stops reading once its
    answers wait in the socket (as aiohttp does), and it still serves everyone else."""
    reader, writer = await asyncio.open_connection("127.0.0.1", two_endpoints[0])
    try:
        burst = (GET % b"/jobs/overview") * 200
        for _ in range(50):
            writer.write(burst)
            await asyncio.sleep(0)
        await asyncio.sleep(0.5)
        other, _ = await both(two_endpoints, GET % b"/overview")
        assert other.startswith(b"HTTP/1.1 200 OK")
        got = await asyncio.wait_for(reader.read(1 << 16), 5)
        assert got.startswith(b"HTTP/1.1 200 OK")
    finally:
        writer.close()


async def test_overview_counts_follow_the_archive(no_leftover_processes: None) -> None:
    """``/overview``'s finished/failed counts (kept per archive version) move with each job that
    ends, on the fast path as through aiohttp, and ``/jobs/overview`` lists the jobs."""
    config = make_config()
    cluster, fast = await start_rest_cluster(config, num_task_managers=1)
    plain = RestServerEndpoint(config, cluster.dispatcher_gateway, fast_gets=False)
    await plain.start()
    try:
        async with RestClusterClient(config, f"127.0.0.1:{fast.port}") as client:
            for i, graph in enumerate([bounded_job("one"), failing_job("two"), bounded_job("three")]):
                job_id = await client.submit_job(graph)
                deadline = asyncio.get_running_loop().time() + 60
                while (await client.get_job_status(job_id)) not in ("FINISHED", "FAILED") or (
                    await client.get_cluster_overview()
                ).jobs_running:  # ended and archived
                    assert asyncio.get_running_loop().time() < deadline, f"job {i} did not end"
                    await asyncio.sleep(0.05)
                expected = {"FINISHED": 1 + (i == 2), "FAILED": int(i >= 1)}
                for port in (fast.port, plain.port):
                    answer = await exchange(port, GET % b"/overview")
                    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
                    assert (body["jobs-finished"], body["jobs-failed"], body["jobs-cancelled"]) == (
                        expected["FINISHED"],
                        expected["FAILED"],
                        0,
                    ), (i, port, body)
                    listing = await exchange(port, GET % b"/jobs/overview")
                    rows = json.loads(listing.split(b"\r\n\r\n", 1)[1])["jobs"]
                    assert len(rows) == i + 1
    finally:
        await plain.stop()
        await fast.stop()
        await cluster.close()
