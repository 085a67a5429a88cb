"""``GET /jobs/overview`` keeps the rows of globally terminal jobs from one answer to the next."""

from __future__ import annotations

import msgspec

from flott.rest.handler.job.job_handlers import _TerminalRows, overview_row
from flott.rest.messages.job import MultipleJobsDetails
from flott.runtime.messages.job import JobDetails


def _details(job_id: str, status: str, duration: int) -> JobDetails:
    return JobDetails(
        job_id=job_id, job_name=job_id, status=status, start_time=1,
        end_time=-1 if status == "RUNNING" else 9, duration=duration, last_modification=5,
        task_counts={"RUNNING": 1}, num_tasks=1, job_type="STREAMING",
    )  # fmt: skip


def test_a_terminal_jobs_row_is_reused_while_the_dispatcher_answers_with_the_same_row() -> None:
    rows = _TerminalRows()
    done, live = _details("done", "FINISHED", 8), _details("live", "RUNNING", 3)
    first = rows.rows([live, done])
    assert [(r.jid, r.state, r.duration, r.tasks["running"], r.tasks["total"]) for r in first] == [
        ("live", "RUNNING", 3, 1, 1),
        ("done", "FINISHED", 8, 1, 1),
    ]
    again = rows.rows([_details("live", "RUNNING", 4), done])
    assert again[1] is first[1], "the archived job's row is not made again"
    assert again[0].duration == 4, "a running job's row is made afresh"
    # A new row object from the Dispatcher (another process, a re-archived job) is never mistaken
    # for the one kept, even with equal fields.
    assert rows.rows([_details("done", "FINISHED", 8)])[0] is not first[1]


def test_the_answer_splices_the_kept_json_of_terminal_rows_into_the_same_bytes() -> None:
    rows = _TerminalRows()
    jobs = [_details("live", "RUNNING", 3), _details("done", "FINISHED", 8), _details("gone", "FAILED", 2)]
    answer = rows.answer(jobs)
    assert isinstance(answer[1], msgspec.Raw) and not isinstance(answer[0], msgspec.Raw)
    plain = MultipleJobsDetails(jobs=[overview_row(d) for d in jobs])
    assert msgspec.json.encode(MultipleJobsDetails(jobs=answer)) == msgspec.json.encode(plain)
    assert rows.answer(jobs)[2] is answer[2], "the archived job's JSON is not encoded again"
