"""The Dispatcher's job lifecycle, driven by events and an explicit clock (no sockets, no asyncio).

What Flink's Dispatcher does per job id: a duplicate submission is refused, a cancel while the
job initializes is carried out once its JobMaster runs, a globally terminal job is archived and
cleaned up, a job recovered from HA runs again, finished jobs expire from the archive.
"""

from __future__ import annotations

import pytest

from flott.errors import (
    DuplicateJobSubmissionError,
    IllegalJobTransitionError,
    IllegalStateTransitionError,
    JobAlreadyTerminalError,
    JobInitializingError,
    JobNotFoundError,
)
from flott.runtime.dispatcher.job_lifecycle import (
    ArchivedJob,
    CancelJob,
    CancelJobMaster,
    CleanupJobFiles,
    ClientHeartbeat,
    DispatcherJobs,
    DispatcherJobStatus,
    Expire,
    InitializationStarted,
    JobMasterStarted,
    JobReachedTerminalState,
    RecordJobResult,
    RescaleAborted,
    RescaleRequested,
    RescaleRestart,
    RestoreArchived,
    StopJobMaster,
    SubmissionFailed,
    Submit,
)
from flott.runtime.messages.job import ExecutionGraphInfo, JobResult

S = DispatcherJobStatus


def archived(job_id: str, status: str, at: float = 0.0) -> ArchivedJob:
    info = ExecutionGraphInfo(
        job_id=job_id, job_name="j", status=status, start_time=1, end_time=2, duration=1, now=2,
        timestamps={}, vertices=[], max_parallelism=1, job_type="STREAMING",
    )  # fmt: skip
    return ArchivedJob(info, JobResult(job_id=job_id, status=status, net_runtime_ms=1), at)


def running(jobs: DispatcherJobs, job_id: str, subtasks: int = 2) -> None:
    assert jobs.handle(Submit(job_id, subtasks), 0) == []
    assert jobs.handle(InitializationStarted(job_id), 0) == []
    assert jobs.handle(JobMasterStarted(job_id), 0) == []


def test_submit_run_finish_archives_and_cleans_up() -> None:
    jobs = DispatcherJobs(max_archived=10, archive_ttl_s=3600)
    jobs.handle(Submit("a", 4), 0)
    assert jobs.status("a") is S.SUBMITTED and jobs.active_subtasks() == 4
    with pytest.raises(JobInitializingError):
        jobs.require_job_master("a")  # no savepoint of a job without a JobMaster
    with pytest.raises(JobNotFoundError):
        jobs.archived("a")  # not visible before it runs (REST answers 404, as before)
    jobs.handle(InitializationStarted("a"), 1)
    jobs.handle(JobMasterStarted("a"), 2)
    assert jobs.status("a") is S.RUNNING and jobs.require_job_master("a").job_id == "a"
    done = archived("a", "FINISHED")
    actions = jobs.handle(JobReachedTerminalState("a", done), 10)
    assert actions == [StopJobMaster("a"), CleanupJobFiles("a"), RecordJobResult("a", done)]
    assert jobs.status("a") is S.ARCHIVED and jobs.active_subtasks() == 0
    assert jobs.archived("a") is done and list(jobs.archive()) == [done]
    with pytest.raises(JobAlreadyTerminalError):
        jobs.require_job_master("a")


def test_duplicate_submission_is_refused_in_every_state() -> None:
    jobs = DispatcherJobs(10, 3600)
    jobs.handle(Submit("a", 1), 0)
    with pytest.raises(DuplicateJobSubmissionError):
        jobs.handle(Submit("a", 1), 0)  # still storing its files
    jobs.handle(InitializationStarted("a"), 0)
    jobs.handle(JobMasterStarted("a"), 0)
    with pytest.raises(DuplicateJobSubmissionError):
        jobs.handle(Submit("a", 1), 0)
    jobs.handle(JobReachedTerminalState("a", archived("a", "FAILED")), 0)
    with pytest.raises(DuplicateJobSubmissionError):
        jobs.handle(Submit("a", 1), 0)  # globally terminal: Flink refuses the id too


def test_a_failed_submission_frees_the_id_and_cleans_only_what_it_stored() -> None:
    jobs = DispatcherJobs(10, 3600)
    jobs.handle(Submit("a", 3), 0)
    assert jobs.handle(SubmissionFailed("a", files_stored=True), 0) == [CleanupJobFiles("a")]
    assert not jobs.knows("a") and jobs.active_subtasks() == 0
    jobs.handle(Submit("a", 3), 0)  # the id may be used again
    jobs.handle(InitializationStarted("a"), 0)
    assert jobs.handle(SubmissionFailed("a"), 0) == []  # e.g. its savepoint is unusable
    assert not jobs.knows("a")


def test_cancel_while_initializing_is_carried_out_when_the_job_master_runs() -> None:
    jobs = DispatcherJobs(10, 3600)
    jobs.handle(Submit("a", 1), 0)
    jobs.handle(InitializationStarted("a"), 0)
    assert jobs.handle(CancelJob("a"), 1) == []
    assert jobs.handle(JobMasterStarted("a"), 2) == [CancelJobMaster("a")]
    assert jobs.handle(CancelJob("a"), 3) == [CancelJobMaster("a")]  # running: cancel at once
    jobs.handle(JobReachedTerminalState("a", archived("a", "CANCELED")), 4)
    assert jobs.handle(CancelJob("a"), 5) == []  # cancelling a CANCELED job succeeds (idempotent)


def test_cancel_of_unknown_or_finished_jobs_are_typed_errors() -> None:
    jobs = DispatcherJobs(10, 3600)
    with pytest.raises(JobNotFoundError):
        jobs.handle(CancelJob("nope"), 0)
    running(jobs, "a")
    jobs.handle(JobReachedTerminalState("a", archived("a", "FINISHED")), 0)
    with pytest.raises(JobAlreadyTerminalError, match="already reached FINISHED"):
        jobs.handle(CancelJob("a"), 0)


def test_illegal_transitions_raise_the_typed_error() -> None:
    jobs = DispatcherJobs(10, 3600)
    jobs.handle(Submit("a", 1), 0)
    with pytest.raises(IllegalJobTransitionError):
        jobs.handle(JobMasterStarted("a"), 0)  # not initializing yet
    with pytest.raises(IllegalJobTransitionError):
        jobs.handle(JobReachedTerminalState("a", archived("a", "FINISHED")), 0)  # has no JobMaster
    with pytest.raises(IllegalJobTransitionError):
        jobs.handle(RescaleRequested("a"), 0)
    running(jobs, "b")
    with pytest.raises(IllegalJobTransitionError):
        jobs.handle(InitializationStarted("b"), 0)
    with pytest.raises(IllegalJobTransitionError):
        jobs.handle(SubmissionFailed("b"), 0)  # a running job's submission cannot fail any more
    with pytest.raises(IllegalJobTransitionError):
        jobs.handle(RescaleRestart("b", 1), 0)
    with pytest.raises(JobNotFoundError):
        jobs.handle(JobMasterStarted("zzz"), 0)
    assert issubclass(IllegalJobTransitionError, IllegalStateTransitionError)
    assert IllegalJobTransitionError.http_status == 500 and JobInitializingError.http_status == 409


def test_rescale_keeps_the_job_visible_and_defers_global_cleanup() -> None:
    jobs = DispatcherJobs(10, 3600)
    running(jobs, "a", subtasks=2)
    jobs.handle(RescaleRequested("a"), 0)
    assert jobs.status("a") is S.RESCALING and jobs.require_job_master("a").job_id == "a"
    first = archived("a", "FINISHED")
    # The first run's end is not global: only its JobMaster goes.
    assert jobs.handle(JobReachedTerminalState("a", first), 1) == [StopJobMaster("a")]
    assert jobs.archived("a") is first
    with pytest.raises(DuplicateJobSubmissionError):
        jobs.handle(Submit("a", 1), 1)
    jobs.handle(RescaleRestart("a", 4), 2)
    assert jobs.status("a") is S.INITIALIZING and jobs.archived("a") is first  # visible throughout
    assert jobs.active_subtasks() == 4
    jobs.handle(JobMasterStarted("a"), 3)
    assert jobs.status("a") is S.RUNNING and list(jobs.archive()) == []


def test_rescale_whose_restart_fails_ends_the_job_globally() -> None:
    jobs = DispatcherJobs(10, 3600)
    running(jobs, "a")
    jobs.handle(RescaleRequested("a"), 0)
    first = archived("a", "FINISHED")
    jobs.handle(JobReachedTerminalState("a", first), 1)
    jobs.handle(RescaleRestart("a", 4), 2)
    assert jobs.handle(SubmissionFailed("a"), 3) == [CleanupJobFiles("a"), RecordJobResult("a", first)]
    assert jobs.status("a") is S.ARCHIVED


def test_a_rescale_whose_savepoint_fails_leaves_the_job_running_and_a_failed_run_is_terminal() -> None:
    jobs = DispatcherJobs(10, 3600)
    running(jobs, "a")
    jobs.handle(RescaleRequested("a"), 0)
    jobs.handle(RescaleAborted("a"), 1)
    assert jobs.status("a") is S.RUNNING
    jobs.handle(RescaleRequested("a"), 2)
    failed = archived("a", "FAILED")
    actions = jobs.handle(JobReachedTerminalState("a", failed), 3)
    assert actions == [StopJobMaster("a"), CleanupJobFiles("a"), RecordJobResult("a", failed)]


def test_recovery_from_ha_runs_stored_jobs_and_restores_the_archive() -> None:
    jobs = DispatcherJobs(10, 3600)
    old = archived("done", "FINISHED", at=-5.0)
    assert jobs.handle(RestoreArchived(old), 0) == []
    assert jobs.archived("done") is old
    jobs.handle(Submit("stored", 2), 0)
    jobs.handle(InitializationStarted("stored"), 0)
    jobs.handle(JobMasterStarted("stored"), 0)
    assert jobs.status("stored") is S.RUNNING
    # An archived copy of a job that runs here is not restored over it.
    assert jobs.handle(RestoreArchived(archived("stored", "FINISHED")), 0) == []
    assert jobs.status("stored") is S.RUNNING


def test_archive_capacity_and_expiry_with_an_injected_clock() -> None:
    jobs = DispatcherJobs(max_archived=2, archive_ttl_s=100)
    for n, job_id in enumerate(("a", "b", "c")):
        running(jobs, job_id)
        jobs.handle(ClientHeartbeat(job_id, 99), n)
        jobs.handle(JobReachedTerminalState(job_id, archived(job_id, "FINISHED", at=float(n))), n)
    assert [a.info.job_id for a in jobs.archive()] == ["b", "c"]  # the oldest went first
    assert not jobs.knows("a")
    jobs.handle(Expire(), 101.5)  # b archived at 1, c at 2: only b is past 100 s
    assert [a.info.job_id for a in jobs.archive()] == ["c"]
    jobs.handle(Expire(), 103)
    assert list(jobs.archive()) == [] and not jobs.knows("c")


def test_expiry_looks_again_after_any_event_that_may_archive_an_older_job() -> None:
    """Reads expire without scanning the archive until its oldest job is due, and an event that
    archives a job (here a restored one, older than everything archived) makes them look again."""
    jobs = DispatcherJobs(max_archived=10, archive_ttl_s=100)
    running(jobs, "a")
    jobs.handle(JobReachedTerminalState("a", archived("a", "FINISHED", at=50.0)), 50)
    jobs.handle(Expire(), 60)  # nothing due before 150
    jobs.handle(RestoreArchived(archived("old", "FINISHED", at=-45.0)), 60)  # due since 55
    assert sorted(a.info.job_id for a in jobs.archive()) == ["a", "old"]
    jobs.handle(Expire(), 61)
    assert [a.info.job_id for a in jobs.archive()] == ["a"]
    jobs.handle(Expire(), 150)
    assert [a.info.job_id for a in jobs.archive()] == ["a"], "due only after 150"
    jobs.handle(Expire(), 150.5)
    assert list(jobs.archive()) == []
