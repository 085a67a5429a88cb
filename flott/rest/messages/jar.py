"""Messages of the ``/jars`` endpoints: Flink's names, for the Python programs flott runs.

A "jar" here is an uploaded Python program (a ``.py`` script, or a ``.zip`` holding an entry
module and the modules it imports); its entries are the modules it can be run as, which
Flink's request bodies name ``entryClass``.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from flott.rest.messages.base import RequestBody, ResponseBody

HexId = Annotated[
    str,
    msgspec.Meta(extra_json_schema={"pattern": "^[0-9a-f]{32}$", "description": "32 hexadecimal digits."}),
]
"""A job or application id in a request (the handler refuses another shape with Flink's message)."""
RecoveryClaimMode = Literal["CLAIM", "NO_CLAIM", "LEGACY"]


class JarEntryInfo(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    """A module the program can be run as (Flink: a main class of the jar)."""

    name: str
    description: str | None = None


class JarFileInfo(ResponseBody, frozen=True, kw_only=True):
    id: str
    name: str
    uploaded: int
    entry: list[JarEntryInfo]


class JarListInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /jars``: ``address`` is the REST endpoint's URL, newest upload first."""

    address: str
    files: list[JarFileInfo]


class JarUploadResponseBody(ResponseBody, frozen=True, kw_only=True):
    """``POST /jars/upload``: ``filename`` is the stored file's path; its name is the jar id."""

    filename: str
    status: Literal["success"] = "success"


class JarPlanRequestBody(RequestBody, frozen=True, kw_only=True):
    """``POST /jars/:jarid/plan``: the program's arguments and settings (query parameters too)."""

    entry_class: str | None = msgspec.field(default=None, name="entryClass")
    program_args_list: list[str] | None = msgspec.field(default=None, name="programArgsList")
    parallelism: int | None = None
    job_id: HexId | None = msgspec.field(default=None, name="jobId")
    flink_configuration: dict[str, str] | None = msgspec.field(default=None, name="flinkConfiguration")


class JarRunRequestBody(JarPlanRequestBody, frozen=True, kw_only=True):
    """``POST /jars/:jarid/run``."""

    allow_non_restored_state: bool | None = msgspec.field(default=None, name="allowNonRestoredState")
    savepoint_path: str | None = msgspec.field(default=None, name="savepointPath")
    claim_mode: RecoveryClaimMode | None = msgspec.field(default=None, name="claimMode")
    restore_mode: RecoveryClaimMode | None = msgspec.field(default=None, name="restoreMode")


class JarRunApplicationRequestBody(JarPlanRequestBody, frozen=True, kw_only=True):
    """``POST /jars/:jarid/run-application``."""

    allow_non_restored_state: bool | None = msgspec.field(default=None, name="allowNonRestoredState")
    savepoint_path: str | None = msgspec.field(default=None, name="savepointPath")
    claim_mode: RecoveryClaimMode | None = msgspec.field(default=None, name="claimMode")
    application_id: HexId | None = msgspec.field(default=None, name="applicationId")


class JarRunResponseBody(ResponseBody, frozen=True, kw_only=True):
    """``POST /jars/:jarid/run``: the job, and the application it belongs to (in flott, its own)."""

    jobid: str
    application_id: str = msgspec.field(name="applicationId")


class JarRunApplicationResponseBody(ResponseBody, frozen=True, kw_only=True):
    applicationid: str
