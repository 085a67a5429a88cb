"""HA services against a real, private ZooKeeper (see conftest.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
from kazoo.client import KazooClient

from flott.configuration import Configuration
from flott.runtime.highavailability import DISPATCHER, HighAvailabilityError, create_ha_services
from flott.runtime.highavailability import leadership as lm
from flott.runtime.highavailability.zookeeper import ZooKeeperHaServices, decode_leader_info
from tests.highavailability.helpers import RecordingContender, RecordingListener, eventually
from tests.highavailability.test_embedded import check_job_result_store_contract
from tests.highavailability.zookeeper_server import ZooKeeperServer, find_classpath

SESSION_TIMEOUT = 2.0


async def services(zookeeper: ZooKeeperServer, root: str, storage_dir: str, **kw) -> ZooKeeperHaServices:
    kw.setdefault("session_timeout", SESSION_TIMEOUT)
    ha = ZooKeeperHaServices(zookeeper.hosts, cluster_id="/c1", storage_dir=storage_dir, root=root, **kw)
    return await ha.start()


def expire_session(zookeeper: ZooKeeperServer, client: KazooClient) -> None:
    """Kazoo's own trick: a second connection with the same session id, then close it."""
    session_id, password = client.client_id
    other = KazooClient(zookeeper.hosts, client_id=(session_id, password), timeout=SESSION_TIMEOUT)
    other.start(5)
    other.stop()
    other.close()


async def elect_two(zookeeper, zk_root, storage_dir, **kw):
    ha_a = await services(zookeeper, zk_root, storage_dir, **kw)
    ha_b = await services(zookeeper, zk_root, storage_dir, **kw)
    el_a = ha_a.get_leader_election_service(DISPATCHER)
    el_b = ha_b.get_leader_election_service(DISPATCHER)
    a = RecordingContender("a", auto_confirm=lambda sid: el_a.confirm_leadership(sid, "rpc://a"))
    b = RecordingContender("b", auto_confirm=lambda sid: el_b.confirm_leadership(sid, "rpc://b"))
    el_a.start(a)
    await eventually(lambda: a.is_leader, what="a leads")
    el_b.start(b)
    return (ha_a, el_a, a), (ha_b, el_b, b)


async def test_address_published_only_after_confirmation(zookeeper, zk_root, storage_dir) -> None:
    ha = await services(zookeeper, zk_root, storage_dir)
    observer = await services(zookeeper, zk_root, storage_dir)
    try:
        listener = RecordingListener()
        observer.get_leader_retrieval_service(DISPATCHER).start(listener)
        election = ha.get_leader_election_service(DISPATCHER)
        contender = RecordingContender("a")  # confirms by hand, later
        election.start(contender)
        await eventually(lambda: contender.is_leader, what="grant")
        sid = contender.session_id
        assert sid is not None and election.has_leadership(sid)
        await asyncio.sleep(0.3)
        assert not ha.client.exists(f"{ha.root}/leader/{DISPATCHER}/connection_info")
        assert listener.address is None

        election.confirm_leadership("not-the-session", "rpc://bogus")
        election.confirm_leadership(sid, "rpc://a")
        await eventually(lambda: listener.address == "rpc://a", what="retrieval")
        assert listener.session_id == sid
        assert ("rpc://bogus", "not-the-session") not in listener.history
        data, stat = ha.client.get(f"{ha.root}/leader/{DISPATCHER}/connection_info")
        assert decode_leader_info(data) == ("rpc://a", sid)
        assert stat.ephemeralOwner == ha.client.client_id[0]

        await election.stop()
        assert contender.events[-1] == ("revoke", sid)
        await eventually(lambda: listener.address is None, what="unpublished on stop")
    finally:
        await ha.close()
        await observer.close()


async def test_two_contenders_failover_on_client_stop(zookeeper, zk_root, storage_dir) -> None:
    (ha_a, el_a, a), (ha_b, el_b, b) = await elect_two(zookeeper, zk_root, storage_dir)
    observer = await services(zookeeper, zk_root, storage_dir)
    try:
        listener = RecordingListener()
        observer.get_leader_retrieval_service(DISPATCHER).start(listener)
        await eventually(lambda: listener.address == "rpc://a", what="a published")
        first_token = a.session_id
        await asyncio.sleep(0.3)
        assert not b.is_leader and b.events == []

        await ha_a.close()  # the leader's ZooKeeper client goes away
        took = await eventually(lambda: b.is_leader, timeout=SESSION_TIMEOUT + 1, what="b leads")
        await eventually(lambda: listener.address == "rpc://b", what="retrieval of b")
        assert listener.session_id == b.session_id != first_token
        assert took < SESSION_TIMEOUT
    finally:
        await el_b.stop()
        await el_a.stop()
        await ha_b.close()
        await observer.close()


async def test_failover_on_session_expiry(zookeeper, zk_root, storage_dir) -> None:
    (ha_a, el_a, a), (ha_b, el_b, b) = await elect_two(zookeeper, zk_root, storage_dir)
    observer = await services(zookeeper, zk_root, storage_dir)
    try:
        listener = RecordingListener()
        observer.get_leader_retrieval_service(DISPATCHER).start(listener)
        await eventually(lambda: listener.address == "rpc://a", what="a published")
        old = a.session_id

        start = time.monotonic()
        await asyncio.to_thread(expire_session, zookeeper, ha_a.client)
        await eventually(lambda: b.is_leader, timeout=SESSION_TIMEOUT + 1, what="b leads")
        await eventually(lambda: ("revoke", old) in a.events, timeout=SESSION_TIMEOUT + 1, what="a revoked")
        await eventually(lambda: listener.address == "rpc://b", what="retrieval of b")
        assert time.monotonic() - start < SESSION_TIMEOUT + 1
        assert listener.session_id == b.session_id
        assert not el_a.has_leadership(old)
        # a rejoined the election with its new session and is the standby now
        await eventually(
            lambda: len(ha_b.client.get_children(el_a.latch_path)) == 2, what="a rejoined the latch"
        )
        assert not a.is_leader

        # and it takes over again when b goes
        await el_b.stop()
        await eventually(lambda: a.is_leader, timeout=SESSION_TIMEOUT + 1, what="a leads again")
        await eventually(lambda: listener.address == "rpc://a", what="retrieval of a")
        assert listener.session_id == a.session_id != old
    finally:
        await el_a.stop()
        await el_b.stop()
        await ha_a.close()
        await ha_b.close()
        await observer.close()


async def test_overwritten_leader_information_is_corrected_on_reconnect(
    zookeeper, zk_root, storage_dir
) -> None:
    (ha_a, el_a, a), (ha_b, el_b, _b) = await elect_two(zookeeper, zk_root, storage_dir)
    try:
        info = f"{ha_a.root}/leader/{DISPATCHER}/connection_info"
        await eventually(lambda: ha_b.client.exists(info) is not None, what="published")
        # a foreign write is rejected by the leader's next publication (same session)
        ha_b.client.set(info, b'{"address": "rpc://evil", "session_id": "x"}')
        el_a._handle(lm.Reconnected())
        await eventually(
            lambda: decode_leader_info(ha_b.client.get(info)[0]) == ("rpc://a", a.session_id),
            what="corrected",
        )
    finally:
        await el_a.stop()
        await el_b.stop()
        await ha_a.close()
        await ha_b.close()


async def test_job_graph_store_survives_a_new_client(zookeeper, zk_root, storage_dir) -> None:
    ha = await services(zookeeper, zk_root, storage_dir)
    store = ha.get_job_graph_store()
    await store.put_job_graph("job-1", b"\x00graph-1")
    await store.put_job_graph("job-2", b"graph-2")
    await store.put_job_graph("job-2", b"graph-2b")  # replaced; the old payload is discarded
    assert await store.get_job_ids() == ["job-1", "job-2"]
    await ha.close()

    ha2 = await services(zookeeper, zk_root, storage_dir)
    try:
        store2 = ha2.get_job_graph_store()
        assert await store2.get_job_ids() == ["job-1", "job-2"]
        assert await store2.recover_job_graph("job-1") == b"\x00graph-1"
        assert await store2.recover_job_graph("job-2") == b"graph-2b"
        assert await store2.recover_job_graph("nope") is None
        payloads = list(ha2.storage.fs.ls(ha2.storage.base, detail=False))
        assert len(payloads) == 2

        # a graph locked by another live process cannot be removed globally (F7: retried)
        ha3 = await services(zookeeper, zk_root, storage_dir)
        try:
            await ha3.get_job_graph_store().recover_job_graph("job-1")
            with pytest.raises(HighAvailabilityError):
                await store2.remove_job_graph("job-1")
            await ha3.get_job_graph_store().release_job_graph("job-1")
        finally:
            await ha3.close()
        await store2.remove_job_graph("job-1")
        await store2.remove_job_graph("job-1")  # idempotent
        assert await store2.get_job_ids() == ["job-2"]
        assert len(ha2.storage.fs.ls(ha2.storage.base, detail=False)) == 1
    finally:
        await ha2.close_and_cleanup_all_data()


async def test_job_result_store_marks_and_lists(zookeeper, zk_root, storage_dir) -> None:
    ha = await services(zookeeper, zk_root, storage_dir)
    try:
        jrs = ha.get_job_result_store()
        await check_job_result_store_contract(jrs)
        await jrs.create_dirty_result("j9", {"id": "j9", "application-status": "FAILED"})
    finally:
        await ha.close()
    ha2 = await services(zookeeper, zk_root, storage_dir)
    try:
        jrs2 = ha2.get_job_result_store()
        assert await jrs2.get_dirty_results() == {"j9": {"id": "j9", "application-status": "FAILED"}}
        assert await jrs2.has_job_result_entry("j9")
    finally:
        await ha2.close()


async def test_checkpoint_id_counter_is_shared(zookeeper, zk_root, storage_dir) -> None:
    ha_a = await services(zookeeper, zk_root, storage_dir)
    ha_b = await services(zookeeper, zk_root, storage_dir)
    try:
        ca, cb = ha_a.get_checkpoint_id_counter("j1"), ha_b.get_checkpoint_id_counter("j1")
        got = await asyncio.gather(*(c.get_and_increment() for c in [ca, cb] * 5))
        assert sorted(got) == list(range(1, 11))
        assert await cb.get() == 11
        await ca.set_count(42)
        assert await cb.get_and_increment() == 42
        await ca.shutdown(globally_terminal=False)
        assert await cb.get() == 43
        await ca.shutdown(globally_terminal=True)
        assert ha_b.client.exists(ca.path) is None  # type: ignore[attr-defined]
    finally:
        await ha_a.close()
        await ha_b.close()


async def test_create_from_configuration(zookeeper, zk_root, storage_dir) -> None:
    config = Configuration(
        {
            "high-availability.type": "zookeeper",
            "high-availability.zookeeper.quorum": zookeeper.hosts,
            "high-availability.zookeeper.path.root": zk_root,
            "high-availability.cluster-id": "/prod",
            "high-availability.storageDir": storage_dir,
            "high-availability.zookeeper.client.session-timeout": "2 s",
        }
    )
    ha = await create_ha_services(config)
    try:
        assert isinstance(ha, ZooKeeperHaServices)
        assert ha.root == f"{zk_root}/prod"
        assert ha.client.exists(ha.root) is not None
    finally:
        await ha.close_and_cleanup_all_data()


async def test_leader_cut_off_from_zookeeper_stops_leading_within_session_timeout(
    tmp_path, zk_root, storage_dir
) -> None:
    """A frozen ZooKeeper (SIGSTOP, its own private instance) leaves kazoo SUSPENDED, never
    LOST: the suspension bound still revokes leadership before the session could expire."""
    classpath = find_classpath()
    assert classpath is not None
    server = ZooKeeperServer(tmp_path / "zk", classpath)
    server.start()
    ha = None
    try:
        ha = await services(server, zk_root, storage_dir)
        election = ha.get_leader_election_service(DISPATCHER)
        a = RecordingContender("a", auto_confirm=lambda sid: election.confirm_leadership(sid, "rpc://a"))
        election.start(a)
        await eventually(lambda: a.is_leader, what="a leads")
        sid = a.session_id
        assert server.proc is not None
        os.kill(server.proc.pid, signal.SIGSTOP)
        try:
            start = time.monotonic()
            await eventually(lambda: not a.is_leader, timeout=SESSION_TIMEOUT + 1, what="revoked")
            assert time.monotonic() - start < SESSION_TIMEOUT
            assert a.events[-1] == ("revoke", sid)
        finally:
            os.kill(server.proc.pid, signal.SIGCONT)
        # back in touch: a rejoins and, being alone, leads again with a new session id
        await eventually(lambda: a.is_leader, timeout=3 * SESSION_TIMEOUT, what="a leads again")
        assert a.session_id != sid
        await election.stop()
    finally:
        if ha is not None:
            await ha.close()
        server.stop()
