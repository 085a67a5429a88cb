"""An error raised on the leader crosses the RPC wire and reaches the REST client as itself.

The REST endpoint of an HA JobManager reaches the leading Dispatcher over RPC (possibly in another
process), through :class:`~flott.cluster.ha_session_cluster.LeaderGateway`. Here the leader is a
real RpcService hosting a fenced Dispatcher endpoint whose ``cancel_job`` raises, by job id, each
error of the tree (as a JobMaster's error reaches the Dispatcher and is passed on); the REST
endpoint talks to it over loopback TCP with its own RpcService, and the client checks the HTTP
status and the ``errors`` text of ``PATCH /jobs/:jobid``. A Dispatcher that lost its leadership
(the fencing token no longer matches) answers 503, which clients retry.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import cast

import aiohttp
import pytest

from flott import errors
from flott.cluster.ha_session_cluster import LeaderGateway
from flott.configuration import Configuration
from flott.rest.webmonitor.rest_server_endpoint import RestServerEndpoint
from flott.runtime.gateways.dispatcher_gateway import DISPATCHER_ENDPOINT, DispatcherGateway
from flott.runtime.rpc.service import RpcEndpoint, RpcService

TREE = sorted(n for n, c in errors._REGISTRY.items() if c.__module__ == "flott.errors")
JOB_IDS = {f"{i:032x}": name for i, name in enumerate(TREE)}
SESSION = "session-1"


def _error(name: str) -> errors.FlottError:
    cls = errors._REGISTRY[name]
    if cls is errors.UserCodeError:
        return errors.UserCodeError("ValueError", "bad record", "Traceback ...", "Map (1/1)#0")
    if "cause" in inspect.signature(cls.__init__).parameters:
        return cls(f"{name} raised on the leader", errors.JobNotFoundError("gone"))  # type: ignore[call-arg]
    return cls(f"{name} raised on the leader")


class ScriptedDispatcher(RpcEndpoint):
    endpoint_id = DISPATCHER_ENDPOINT
    fenced = True
    fencing_token = SESSION

    async def cancel_job(self, job_id: str) -> None:
        raise _error(JOB_IDS[job_id])


@dataclass
class Leader:
    dispatcher: ScriptedDispatcher
    url: str
    http: aiohttp.ClientSession

    async def cancel(self, job_id: str) -> tuple[int, list[str]]:
        async with self.http.patch(f"{self.url}/v1/jobs/{job_id}?mode=cancel") as r:
            return r.status, (await r.json())["errors"]


@pytest.fixture
async def leader() -> AsyncIterator[Leader]:
    leader_rpc, rest_rpc = RpcService(), RpcService()
    await leader_rpc.start()
    await rest_rpc.start()
    dispatcher = ScriptedDispatcher()
    leader_rpc.register(dispatcher)
    gateway = LeaderGateway(
        rest_rpc.connect(leader_rpc.address, DISPATCHER_ENDPOINT, DispatcherGateway, fencing_token=SESSION)
    )
    config = Configuration({"rest.port": "0", "rest.address": "127.0.0.1", "rest.bind-address": "127.0.0.1"})
    endpoint = RestServerEndpoint(config, cast(DispatcherGateway, gateway))
    host, port = await endpoint.start()
    try:
        async with aiohttp.ClientSession() as http:
            yield Leader(dispatcher, f"http://{host}:{port}", http)
    finally:
        await endpoint.stop()
        await rest_rpc.stop()
        await leader_rpc.stop()


async def test_every_error_of_the_tree_comes_back_with_its_class_and_status(leader: Leader) -> None:
    wrong = []
    for job_id, name in JOB_IDS.items():
        cls = errors._REGISTRY[name]
        if cls is errors.FencingTokenError:
            continue  # the next test: a fencing error means "not the leader" to a REST client
        status, messages = await leader.cancel(job_id)
        err = _error(name)
        if isinstance(err, errors.RestRequestError | errors.NoLeaderError):
            expected = [err.message]  # the REST layer's own errors keep Flink's exact texts
        else:
            expected = [f"{name}: {err.message}"]
        if (status, messages) != (cls.http_status, expected):
            wrong.append((name, status, messages, cls.http_status, expected))
    assert not wrong, wrong


async def test_a_dispatcher_that_lost_its_leadership_answers_503(leader: Leader) -> None:
    job_id = next(j for j, name in JOB_IDS.items() if name == "JobNotFoundError")
    assert (await leader.cancel(job_id))[0] == 404
    leader.dispatcher.fencing_token = "session-2"  # a new leader was elected meanwhile
    status, messages = await leader.cancel(job_id)
    assert status == 503 and messages == ["The Dispatcher this request reached lost its leadership; retry."]
