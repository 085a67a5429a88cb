"""The pieces the JobManager process builds on, against the private ZooKeeper: the one election of
a process publishing every component, and stores that refuse a deposed leader's writes."""

from __future__ import annotations

import pytest

from flott.errors import LeadershipLostError
from flott.runtime.highavailability import DISPATCHER, RESOURCE_MANAGER, REST_SERVER
from flott.runtime.highavailability.services import (
    CompletedCheckpointPointer,
    is_token_of_session,
    job_master_fencing_token,
)
from flott.runtime.highavailability.zookeeper import decode_leader_info
from tests.highavailability.helpers import RecordingContender, RecordingListener, eventually
from tests.highavailability.test_zookeeper import services

ADDRESSES = {
    DISPATCHER: "127.0.0.1:6123",
    RESOURCE_MANAGER: "127.0.0.1:6123",
    REST_SERVER: "http://127.0.0.1:8081",
}


async def test_process_election_publishes_every_component_only_after_confirmation(
    zookeeper, zk_root, storage_dir
) -> None:
    ha = await services(zookeeper, zk_root, storage_dir)
    observer = await services(zookeeper, zk_root, storage_dir)
    try:
        listeners = {c: RecordingListener() for c in ADDRESSES}
        for component, listener in listeners.items():
            observer.get_leader_retrieval_service(component).start(listener)
        election = ha.get_process_leader_election_service(ADDRESSES)
        contender = RecordingContender("jm")
        election.start(contender)
        await eventually(lambda: contender.is_leader, what="grant")
        sid = contender.session_id
        assert sid is not None
        assert election.latch_path == f"{ha.root}/leader/latch"
        assert election.leader_node is not None and election.leader_node.startswith(election.latch_path)
        assert all(listener.address is None for listener in listeners.values())

        election.confirm_leadership(sid, ADDRESSES[DISPATCHER])
        for component, listener in listeners.items():
            await eventually(lambda listener=listener: listener.address is not None, what=component)
            assert (listener.address, listener.session_id) == (ADDRESSES[component], sid)
            data, stat = ha.client.get(f"{ha.root}/leader/{component}/connection_info")
            assert decode_leader_info(data) == (ADDRESSES[component], sid)
            assert stat.ephemeralOwner == ha.client.client_id[0]

        await election.stop()
        assert contender.events[-1] == ("revoke", sid)
        for component, listener in listeners.items():
            await eventually(lambda listener=listener: listener.address is None, what=f"{component} gone")
    finally:
        await ha.close()
        await observer.close()


async def test_a_deposed_leader_cannot_store_jobs_or_checkpoints(zookeeper, zk_root, storage_dir) -> None:
    ha = await services(zookeeper, zk_root, storage_dir)
    try:
        election = ha.get_process_leader_election_service(ADDRESSES)
        contender = RecordingContender("jm")
        election.start(contender)
        await eventually(lambda: contender.is_leader, what="grant")
        node = election.leader_node
        assert node is not None
        graphs = ha.get_job_graph_store()
        checkpoints = ha.get_completed_checkpoint_store("job-1")
        await graphs.put_job_graph("job-1", b"graph", leader_node=node)
        await checkpoints.add_checkpoint(CompletedCheckpointPointer(1, "file:///c/chk-1"), leader_node=node)

        sid = contender.session_id
        ha.client.delete(node)  # what another contender's taking over looks like to this one
        await eventually(lambda: ("revoke", sid) in contender.events, what="revoked")
        with pytest.raises(LeadershipLostError):
            await graphs.put_job_graph("job-2", b"graph-2", leader_node=node)
        with pytest.raises(LeadershipLostError):
            await checkpoints.add_checkpoint(
                CompletedCheckpointPointer(2, "file:///c/chk-2"), leader_node=node
            )
        assert await graphs.get_job_ids() == ["job-1"]
        assert [p.checkpoint_id for p in await checkpoints.get_all_checkpoints()] == [1]
        # the refused job graph left no payload behind
        assert len(ha.storage.fs.ls(ha.storage.base, detail=False)) == 1
        await election.stop()
    finally:
        await ha.close_and_cleanup_all_data()


async def test_completed_checkpoint_pointers_and_id_counter(zookeeper, zk_root, storage_dir) -> None:
    ha = await services(zookeeper, zk_root, storage_dir)
    try:
        store = ha.get_completed_checkpoint_store("job-1")
        for cid in (3, 1, 5, 2, 4):
            await store.add_checkpoint(CompletedCheckpointPointer(cid, f"file:///c/chk-{cid}", "CHECKPOINT"))
        pointers = await store.get_all_checkpoints()
        assert [p.checkpoint_id for p in pointers] == [3, 4, 5]  # the latest three, oldest first
        assert pointers[-1] == CompletedCheckpointPointer(5, "file:///c/chk-5", "CHECKPOINT")

        counter = ha.get_checkpoint_id_counter("job-1")
        assert await counter.get() == 1
        await counter.advance_to(7)
        await counter.advance_to(4)  # never lowered
        assert await counter.get() == 7
        assert await counter.get_and_increment() == 7

        await store.shutdown(globally_terminal=True)
        assert await store.get_all_checkpoints() == []
        assert not ha.client.exists(f"{ha.root}/jobs/job-1")
    finally:
        await ha.close_and_cleanup_all_data()


def test_job_master_tokens_name_their_leader_session() -> None:
    token = job_master_fencing_token("session-a")
    assert is_token_of_session(token, "session-a")
    assert not is_token_of_session(token, "session-b")
    assert token != job_master_fencing_token("session-a")
