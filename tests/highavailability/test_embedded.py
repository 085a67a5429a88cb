"""``high-availability.type: none`` needs no ZooKeeper."""

from __future__ import annotations

import pytest

from flott.configuration import Configuration
from flott.runtime.highavailability import (
    DEFAULT_LEADER_SESSION_ID,
    DISPATCHER,
    EmbeddedHaServices,
    FileSystemJobResultStore,
    HighAvailabilityError,
    JobResultStore,
    create_ha_services,
)
from flott.runtime.highavailability.embedded import InMemoryJobResultStore
from tests.highavailability.helpers import RecordingContender, RecordingListener, eventually


async def test_leadership_is_granted_at_once_and_retrieval_sees_confirmed_address() -> None:
    ha = await create_ha_services(Configuration())
    assert isinstance(ha, EmbeddedHaServices)
    election = ha.get_leader_election_service(DISPATCHER)
    listener = RecordingListener()
    ha.get_leader_retrieval_service(DISPATCHER, default_address="configured:6123").start(listener)
    assert listener.history == [("configured:6123", DEFAULT_LEADER_SESSION_ID)]

    contender = RecordingContender("a", auto_confirm=lambda sid: election.confirm_leadership(sid, "rpc://a"))
    election.start(contender)
    await eventually(lambda: contender.is_leader, what="grant")
    assert contender.session_id == DEFAULT_LEADER_SESSION_ID
    assert election.has_leadership(DEFAULT_LEADER_SESSION_ID)
    assert listener.address == "rpc://a"

    late = RecordingListener()
    ha.get_leader_retrieval_service(DISPATCHER).start(late)
    assert late.history == [("rpc://a", DEFAULT_LEADER_SESSION_ID)]

    await election.stop()
    assert contender.events[-1] == ("revoke", DEFAULT_LEADER_SESSION_ID)
    assert listener.address is None
    assert not election.has_leadership(DEFAULT_LEADER_SESSION_ID)


async def test_in_memory_stores_and_counter() -> None:
    ha = EmbeddedHaServices()
    store = ha.get_job_graph_store()
    await store.put_job_graph("j1", b"graph")
    assert await store.get_job_ids() == ["j1"]
    assert await store.recover_job_graph("j1") == b"graph"
    await store.remove_job_graph("j1")
    assert await store.recover_job_graph("j1") is None

    counter = ha.get_checkpoint_id_counter("j1")
    assert [await counter.get_and_increment() for _ in range(3)] == [1, 2, 3]
    await counter.set_count(10)
    assert await counter.get() == 10


async def check_job_result_store_contract(jrs: JobResultStore) -> None:
    await jrs.create_dirty_result("j1", {"id": "j1", "application-status": "SUCCEEDED"})
    assert await jrs.has_dirty_job_result_entry("j1")
    assert await jrs.has_job_result_entry("j1")
    assert await jrs.get_dirty_results() == {"j1": {"id": "j1", "application-status": "SUCCEEDED"}}
    with pytest.raises(ValueError):
        await jrs.create_dirty_result("j1", {})
    with pytest.raises(KeyError):
        await jrs.mark_result_as_clean("unknown")
    await jrs.mark_result_as_clean("j1")
    assert not await jrs.has_dirty_job_result_entry("j1")
    assert await jrs.get_dirty_results() == {}


async def test_in_memory_job_result_store_contract() -> None:
    jrs = InMemoryJobResultStore()
    await check_job_result_store_contract(jrs)
    assert await jrs.has_clean_job_result_entry("j1")
    with pytest.raises(ValueError):
        await jrs.create_dirty_result("j1", {})


@pytest.mark.parametrize("delete_on_commit", [True, False])
async def test_filesystem_job_result_store_contract(tmp_path, delete_on_commit: bool) -> None:
    jrs = FileSystemJobResultStore(f"file://{tmp_path}/jrs", delete_on_commit=delete_on_commit)
    await check_job_result_store_contract(jrs)
    assert await jrs.has_clean_job_result_entry("j1") is (not delete_on_commit)
    assert (tmp_path / "jrs" / "j1.json").exists() is (not delete_on_commit)
    # a second instance (a new leader) sees the same entries
    again = FileSystemJobResultStore(f"file://{tmp_path}/jrs")
    await again.create_dirty_result("j2", {"id": "j2"})
    assert set(await jrs.get_dirty_results()) == {"j2"}


async def test_zookeeper_type_without_storage_dir_is_rejected() -> None:
    with pytest.raises(HighAvailabilityError):
        await create_ha_services(Configuration({"high-availability.type": "zookeeper"}))
    with pytest.raises(HighAvailabilityError):
        await create_ha_services(Configuration({"high-availability.type": "bogus"}))
