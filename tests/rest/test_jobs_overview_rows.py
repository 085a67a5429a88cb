"""``GET /jobs/overview`` keeps the archived jobs' rows as JSON while the Dispatcher's archive does
not change, and its bytes stay those of encoding every row afresh."""

from __future__ import annotations

import random

import msgspec

from flott.rest.handler.job.job_handlers import _OverviewBodies, overview_row
from flott.rest.messages.job import MultipleJobsDetails
from flott.runtime.messages.job import JobDetails, JobsOverviewParts, insertion_points, interleave
from tests.rest.conftest import RestCluster
from tests.rest.jobs import bounded_job, unbounded_job


def _details(job_id: str, status: str, start: int, duration: int = 3) -> JobDetails:
    return JobDetails(
        job_id=job_id, job_name=job_id, status=status, start_time=start,
        end_time=-1 if status == "RUNNING" else start + 9, duration=duration, last_modification=5,
        task_counts={"RUNNING": 1}, num_tasks=1, job_type="STREAMING",
    )  # fmt: skip


def _started(d: JobDetails) -> int:
    return d.start_time


def _plain(rows: list[JobDetails]) -> bytes:
    return msgspec.json.encode(MultipleJobsDetails(jobs=[overview_row(d) for d in rows]))


def _newest_first(rows: list[JobDetails]) -> list[JobDetails]:
    return sorted(rows, key=_started, reverse=True)


def test_live_rows_go_among_archived_ones_as_one_stable_sort_by_start_time_puts_them() -> None:
    rng = random.Random(7)
    for _ in range(200):
        archived = _newest_first(
            [_details(f"a{i}", "FINISHED", rng.randint(0, 6)) for i in range(rng.randint(0, 8))]
        )
        live = _newest_first(
            [_details(f"l{i}", "RUNNING", rng.randint(0, 6)) for i in range(rng.randint(0, 4))]
        )
        merged = interleave(archived, live, insertion_points(live, [-d.start_time for d in archived]))
        assert merged == sorted(live + archived, key=_started, reverse=True)


def test_the_body_is_the_same_bytes_as_encoding_every_row_and_the_archived_json_is_kept() -> None:
    bodies = _OverviewBodies()
    archived = _newest_first([_details("done", "FINISHED", 4), _details("gone", "FAILED", 2)])
    live = [_details("live", "RUNNING", 3, duration=3)]
    first = bodies.body(JobsOverviewParts(live, archived, "d:1"))
    assert first == _plain(_newest_first(live + archived))
    assert bodies.version == "d:1"
    # The same archive: the Dispatcher leaves the archived rows out, the body still has them.
    live = [_details("live", "RUNNING", 3, duration=4)]
    again = bodies.body(JobsOverviewParts(live, None, "d:1"))
    assert again == _plain(_newest_first(live + archived))
    without_live = bodies.body(JobsOverviewParts([], None, "d:1"))
    assert without_live == _plain(archived)
    assert bodies.body(JobsOverviewParts([], None, "d:1")) is without_live, "the body is kept whole"
    # The archive changed: the new rows replace the kept ones.
    archived = _newest_first([*archived, _details("live", "FINISHED", 3)])
    assert bodies.body(JobsOverviewParts([], archived, "d:2")) == _plain(archived)
    assert bodies.body(JobsOverviewParts([], None, "d:2")) == _plain(archived)


def test_rows_of_another_version_than_the_kept_one_are_never_spliced() -> None:
    bodies = _OverviewBodies()
    archived = [_details("done", "FINISHED", 4)]
    bodies.body(JobsOverviewParts([], archived, "d:2"))
    assert bodies.body(JobsOverviewParts([], None, "d:1")) is None, "ask again"
    assert bodies.body(JobsOverviewParts([], None, "")) is None
    # Rows that are not to be kept (empty version) are answered but not kept.
    other = [_details("other", "CANCELED", 1)]
    assert bodies.body(JobsOverviewParts([], other, "")) == _plain(other)
    assert bodies.body(JobsOverviewParts([], None, "d:2")) == _plain(archived)


def test_an_empty_overview() -> None:
    assert _OverviewBodies().body(JobsOverviewParts([], [], "d:1")) == _plain([])


async def test_a_cluster_answers_the_same_bytes_and_sends_archived_rows_only_when_they_changed(
    rest_cluster: RestCluster,
) -> None:
    """Archived jobs and a running one, through the real Dispatcher and endpoint."""
    rc = rest_cluster
    client = rc.client()
    gateway = rc.cluster.dispatcher_gateway()
    done = [await client.submit_job(bounded_job(f"done-{i}", n=5)) for i in range(3)]
    for job_id in done:
        assert await gateway.request_job_result(job_id, 60.0) is not None
    parts = await gateway.request_jobs_overview("")
    assert parts.archived is not None and parts.archived_version
    assert {d.job_id for d in parts.archived} >= set(done)
    again = await gateway.request_jobs_overview(parts.archived_version)
    assert again.archived is None, "an unchanged archive is not sent again"
    assert again.archived_version == parts.archived_version
    async with rc.http.get(rc.base_url + "/jobs/overview") as resp:
        body = await resp.read()
    assert body == _plain(await gateway.request_multiple_job_details())
    live = await client.submit_job(unbounded_job("live", parallelism=1, rate=10))
    try:
        _, answer = await rc.call("GET", "/jobs/overview")
        assert answer["jobs"][0]["jid"] == live, "the newest job first"
        assert [j["jid"] for j in answer["jobs"][1:]] == [d.job_id for d in parts.archived]
    finally:
        await client.cancel_job(live)
    assert await gateway.request_job_result(live, 60.0) is not None
    after = await gateway.request_jobs_overview(parts.archived_version)
    assert after.archived is not None and after.archived_version != parts.archived_version
    assert after.archived[0].job_id == live, "the cancelled job is archived: a new version"
    async with rc.http.get(rc.base_url + "/jobs/overview") as resp:
        assert await resp.read() == _plain(await gateway.request_multiple_job_details())
