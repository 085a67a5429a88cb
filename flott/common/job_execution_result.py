"""``JobExecutionResult``: what ``env.execute()`` returns once a job finished."""

from __future__ import annotations

from typing import Any

from flott.common.job_id import JobID

__all__ = ["JobExecutionResult"]


class JobExecutionResult:
    """The id, net runtime (ms) and accumulator results of a finished job."""

    def __init__(
        self, job_id: JobID | str, net_runtime: int, accumulators: dict[str, Any] | None = None
    ) -> None:
        self._job_id = job_id if isinstance(job_id, JobID) else JobID.from_hex_string(job_id)
        self._net_runtime = int(net_runtime)
        self._accumulators = dict(accumulators or {})

    def get_job_id(self) -> JobID:
        return self._job_id

    def get_net_runtime(self) -> int:
        """Net execution time of the job in milliseconds."""
        return self._net_runtime

    def get_accumulator_result(self, accumulator_name: str) -> Any:
        """The final value of an accumulator, or None if the job has none of that name."""
        return self._accumulators.get(accumulator_name)

    def get_all_accumulator_results(self) -> dict[str, Any]:
        return dict(self._accumulators)

    def is_job_execution_result(self) -> bool:
        return True

    def get_job_execution_result(self) -> JobExecutionResult:
        return self

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, JobExecutionResult)
            and self._job_id == other._job_id
            and self._net_runtime == other._net_runtime
            and self._accumulators == other._accumulators
        )

    def __hash__(self) -> int:
        return hash((self._job_id, self._net_runtime))

    def __str__(self) -> str:
        text = (
            "Program execution finished\n"
            f"Job with JobID {self._job_id} has finished.\n"
            f"Job Runtime: {self._net_runtime} ms\n"
        )
        if self._accumulators:
            text += "Accumulator Results: \n" + "".join(
                f"- {name} ({type(value).__name__}): {value}\n"
                for name, value in sorted(self._accumulators.items())
            )
        return text

    def __repr__(self) -> str:
        return (
            f"JobExecutionResult(job_id={self._job_id}, net_runtime={self._net_runtime}, "
            f"accumulators={self._accumulators!r})"
        )
