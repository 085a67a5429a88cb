"""RPC over real loopback sockets: typed calls, errors across the wire, fencing, deadlines."""

from __future__ import annotations

import asyncio
from typing import Protocol

import msgspec
import pytest

from flott.errors import (
    FencingTokenError,
    JobNotFoundError,
    RpcConnectionError,
    RpcError,
    RpcTimeoutError,
    UnknownRpcMethodError,
    UserCodeError,
)
from flott.runtime.rpc.service import RpcEndpoint, RpcService


class Point(msgspec.Struct, frozen=True):
    x: int
    y: int


class EchoGateway(Protocol):
    async def add(self, a: Point, b: Point) -> Point: ...

    async def missing_job(self, job_id: str) -> None: ...

    async def user_error(self) -> None: ...

    async def crash(self) -> None: ...

    async def slow(self, seconds: float) -> str: ...

    async def nope(self) -> None: ...


class Echo(RpcEndpoint):
    endpoint_id = "echo"

    async def add(self, a: Point, b: Point) -> Point:
        assert isinstance(a, Point)
        return Point(a.x + b.x, a.y + b.y)

    async def missing_job(self, job_id: str) -> None:
        raise JobNotFoundError(f"job {job_id} not found")

    async def user_error(self) -> None:
        raise UserCodeError("ValueError", "bad record", "Traceback: ...", "Map (1/1)#0")

    async def crash(self) -> None:
        raise KeyError("internal")

    async def slow(self, seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "done"


class Fenced(Echo):
    endpoint_id = "fenced"
    fenced = True
    fencing_token = "leader-2"


async def _pair() -> tuple[RpcService, RpcService]:
    server, client = RpcService(), RpcService()
    await server.start()
    await client.start()
    server.register(Echo())
    server.register(Fenced())
    return server, client


@pytest.mark.parametrize("local", [False, True])
async def test_typed_call_and_errors(local: bool) -> None:
    server, client = await _pair()
    caller = server if local else client
    try:
        gw = caller.connect(server.address, "echo", EchoGateway)
        assert await gw.add(Point(1, 2), Point(3, 4)) == Point(4, 6)
        with pytest.raises(JobNotFoundError, match="job abc not found"):
            await gw.missing_job("abc")
        with pytest.raises(UserCodeError) as info:
            await gw.user_error()
        assert info.value.exception_type == "ValueError" and info.value.task_name == "Map (1/1)#0"
        with pytest.raises(RpcError, match="KeyError"):
            await gw.crash()
        with pytest.raises(UnknownRpcMethodError):
            await gw.nope()
        with pytest.raises(RpcTimeoutError, match="did not answer"):
            await gw.slow(5.0, timeout=0.2)
        assert await gw.slow(0.01) == "done"
    finally:
        await client.stop()
        await server.stop()


async def test_fencing_rejects_stale_token() -> None:
    server, client = await _pair()
    try:
        stale = client.connect(server.address, "fenced", EchoGateway, fencing_token="leader-1")
        with pytest.raises(FencingTokenError, match="leader-1"):
            await stale.add(Point(0, 0), Point(1, 1))
        current = client.connect(server.address, "fenced", EchoGateway, fencing_token="leader-2")
        assert await current.add(Point(0, 0), Point(1, 1)) == Point(1, 1)
    finally:
        await client.stop()
        await server.stop()


async def test_unreachable_peer_and_lost_connection() -> None:
    server, client = await _pair()
    gw = client.connect(server.address, "echo", EchoGateway)
    call = asyncio.ensure_future(gw.slow(10.0))
    await asyncio.sleep(0.1)
    await server.stop()
    with pytest.raises(RpcConnectionError):
        await call
    with pytest.raises(RpcConnectionError):
        await gw.add(Point(0, 0), Point(0, 0), timeout=1.0)
    await client.stop()
