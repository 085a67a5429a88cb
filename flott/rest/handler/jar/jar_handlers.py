"""``/jars/*``: upload, list, plan, run and delete Python programs, as Flink's web submission does jars.

Scripts and UIs built on Flink's jar routes submit Python jobs to flott unchanged: ``POST
/jars/upload`` takes the program as Flink's CLI and web UI send a jar (one multipart file part,
read by the bounded parser of ``POST /jobs``); ``POST /jars/:id/plan`` and ``/run`` take Flink's
request fields, in the body or as query parameters (the body wins), with ``entryClass`` naming
the entry module. The program is planned in a child process (:mod:`.jar_program`), never in
this interpreter; ``run`` submits its job to the Dispatcher with its Python files, as ``POST
/jobs`` does, and answers ``{"jobid", "applicationId"}`` (in flott a job is its own
application, with the job's id). With ``web.submit.enable: false`` (Flink's key) these routes
answer 404, as Flink, which then registers none of them.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from flott.errors import RestNotFoundError, RestRequestError
from flott.rest.handler.handler import INT32_MAX, HandlerRequest, QueryParam, RestRoute
from flott.rest.handler.jar.jar_program import (
    PlannedProgram,
    ProgramInvocation,
    plan_in_child,
    program_limits,
)
from flott.rest.handler.jar.jar_store import JAR_DIR_NAME, MAIN_MODULE, JarStore, StoredProgram
from flott.rest.handler.job.job_submit_handler import receive_multipart, too_large
from flott.rest.handler.job.views import job_graph_plan
from flott.rest.messages.base import EmptyResponseBody
from flott.rest.messages.jar import (
    JarEntryInfo,
    JarFileInfo,
    JarListInfo,
    JarPlanRequestBody,
    JarRunApplicationRequestBody,
    JarRunApplicationResponseBody,
    JarRunRequestBody,
    JarRunResponseBody,
    JarUploadResponseBody,
)
from flott.rest.messages.job import JobPlanInfo

SUBMIT_ENABLED_KEY = "web.submit.enable"
_STORE = "jar-store"
_PLANNING = "jar-planning-slots"
MAX_PLANNING_PROGRAMS = 2
"""Programs planned at once: each is a Python process of up to flott.rest.program.memory."""
FIXED_JOB_ID = "$internal.pipeline.job-id"
SAVEPOINT_PATH = "execution.savepoint.path"
ALLOW_NON_RESTORED = "execution.savepoint.ignore-unclaimed-state"
PYTHON_FILES = "python.files"
_HEX32 = frozenset("0123456789abcdef")


def _store(req: HandlerRequest) -> JarStore:
    if not req.config.get_bool(SUBMIT_ENABLED_KEY, True):
        raise RestNotFoundError(
            f"Not found: {req.request.path} (submitting programs through /jars is off: {SUBMIT_ENABLED_KEY})"
        )
    store = req.context.extras.get(_STORE)
    if store is None:
        directory = req.context.upload_dir.parent / JAR_DIR_NAME
        store = req.context.extras[_STORE] = JarStore(directory, req.context.max_content_length)
    return store  # type: ignore[no-any-return]


def _address(req: HandlerRequest) -> str:
    sockname = req.request.transport.get_extra_info("sockname") if req.request.transport else None
    port = sockname[1] if isinstance(sockname, tuple) and len(sockname) > 1 else req.config.get("rest.port")
    return f"{req.request.scheme}://{req.config.get('rest.address')}:{port}"


# -- upload, list, delete ------------------------------------------------------------------------


async def upload_jar(req: HandlerRequest) -> JarUploadResponseBody:
    store = _store(req)
    limit = req.context.max_content_length
    request = req.request
    if request.content_length is not None and request.content_length > limit:
        raise too_large(limit)
    if request.content_type != "multipart/form-data":
        raise RestRequestError(
            "POST /jars/upload expects multipart/form-data with one file part (the .py or .zip "
            f"program), got {request.content_type or 'no content type'}."
        )
    req.context.upload_dir.mkdir(parents=True, exist_ok=True)
    request_dir = Path(tempfile.mkdtemp(prefix="jar-upload-", dir=req.context.upload_dir))
    try:
        upload = await receive_multipart(request, request_dir, limit, req.context.body_idle_timeout_s)
        if upload.request_json is not None:
            raise RestRequestError("POST /jars/upload takes one file part and no 'request' attribute.")
        if len(upload.files) != 1:
            raise RestRequestError(f"Exactly 1 file must be sent, received {len(upload.files)}.")
        ((name, stored),) = upload.files.items()
        program = await asyncio.to_thread(store.add, stored.path, name)
    finally:
        await asyncio.to_thread(shutil.rmtree, request_dir, True)
    return JarUploadResponseBody(filename=str(program.path))


def _file_info(p: StoredProgram) -> JarFileInfo:
    return JarFileInfo(
        id=p.jar_id,
        name=p.name,
        uploaded=p.uploaded_ms,
        entry=[JarEntryInfo(name=e) for e in p.entries],
    )


async def list_jars(req: HandlerRequest) -> JarListInfo:
    programs = await asyncio.to_thread(_store(req).all)
    return JarListInfo(address=_address(req), files=[_file_info(p) for p in programs])


async def delete_jar(req: HandlerRequest) -> EmptyResponseBody:
    await asyncio.to_thread(_store(req).delete, req.path_param("jarid"))
    return EmptyResponseBody()


# -- plan and run ----------------------------------------------------------------------------------


def _job_id(value: str | None, field: str) -> str | None:
    if value is None:
        return None
    if len(value) != 32 or not set(value) <= _HEX32:
        raise RestRequestError(
            f"Request did not match expected format: {field} must be 32 lower-case hexadecimal digits, "
            f"got {value[:64]!r}."
        )
    return value


def _invocation(
    req: HandlerRequest,
    program: StoredProgram,
    body: JarPlanRequestBody,
    job_id: str | None,
    extra: dict[str, str],
) -> ProgramInvocation:
    """What the child runs, from the body's fields or else the query's (Flink's precedence)."""
    entry = body.entry_class if body.entry_class is not None else req.query("entry-class")
    if body.program_args_list is not None:
        args = tuple(body.program_args_list)
    else:
        args = tuple(req.query_list("programArg"))
    parallelism = body.parallelism
    if parallelism is None:
        parallelism = req.query_int("parallelism", 1, INT32_MAX)
    if parallelism is not None and not 1 <= parallelism <= INT32_MAX:
        raise RestRequestError(f"The parallelism must be a positive integer, got {parallelism}.")
    # As Flink's: the program sees the cluster's configuration with the request's on top.
    config = req.config.to_dict()
    config["parallelism.default"] = req.config.get("parallelism.default")
    config.update(body.flink_configuration or {})
    if parallelism is not None:
        config["parallelism.default"] = str(parallelism)
    if job_id is not None:
        config[FIXED_JOB_ID] = job_id
    config.update(extra)
    module = program.entry_module(entry)
    if not program.is_archive:
        return ProgramInvocation(script=program.path, args=args, config=config)
    # The archive goes with the job (its modules are imported on the TaskExecutors too).
    config[PYTHON_FILES] = ",".join(f for f in (str(program.path), config.get(PYTHON_FILES, "")) if f)
    if module == MAIN_MODULE:
        return ProgramInvocation(script=program.path, args=args, config=config)
    return ProgramInvocation(module=module, args=args, config=config)


def _restore_settings(
    req: HandlerRequest, savepoint: str | None, allow: bool | None, claim: str | None
) -> dict[str, str]:
    if claim is not None and claim != "NO_CLAIM":
        raise RestRequestError(
            f"claimMode {claim} is not supported by flott: it restores a savepoint without claiming it "
            "(NO_CLAIM)."
        )
    savepoint = savepoint if savepoint is not None else req.query("savepointPath")
    allow = allow if allow is not None else req.query_bool("allowNonRestoredState")
    out: dict[str, str] = {}
    if savepoint:
        out[SAVEPOINT_PATH] = savepoint
    if allow:
        out[ALLOW_NON_RESTORED] = "true"
    return out


async def _plan(req: HandlerRequest, invocation: ProgramInvocation) -> tuple[PlannedProgram, Path]:
    """The planned program and its working directory (the caller removes it). At most
    :data:`MAX_PLANNING_PROGRAMS` programs are planned at once; further requests wait their turn."""
    timeout_s, memory = program_limits(req.config)
    slots = req.context.extras.get(_PLANNING)
    if slots is None:
        slots = req.context.extras[_PLANNING] = asyncio.Semaphore(MAX_PLANNING_PROGRAMS)
    async with slots:
        req.context.upload_dir.mkdir(parents=True, exist_ok=True)
        work_dir = Path(tempfile.mkdtemp(prefix="program-", dir=req.context.upload_dir))
        try:
            return await plan_in_child(invocation, work_dir, timeout_s, memory), work_dir
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, work_dir, True)
            raise


async def plan_jar(req: HandlerRequest) -> JobPlanInfo:
    store = _store(req)
    body = await req.body(JarPlanRequestBody)
    program = await asyncio.to_thread(store.get, req.path_param("jarid"))
    invocation = _invocation(req, program, body, _job_id(body.job_id, "jobId"), {})
    planned, work_dir = await _plan(req, invocation)
    await asyncio.to_thread(shutil.rmtree, work_dir, True)
    return JobPlanInfo(plan=job_graph_plan(planned.job_graph))


async def _submit(req: HandlerRequest, invocation: ProgramInvocation) -> str:
    gateway = await req.gateway()
    planned, work_dir = await _plan(req, invocation)
    try:
        # the Dispatcher puts the Python files into the BlobServer before it answers
        await gateway.submit_job_with_artifacts(planned.job_graph, planned.artifacts)
    finally:
        await asyncio.to_thread(shutil.rmtree, work_dir, True)
    return planned.job_graph.job_id


async def run_jar(req: HandlerRequest) -> JarRunResponseBody:
    store = _store(req)
    body = await req.body(JarRunRequestBody)
    program = await asyncio.to_thread(store.get, req.path_param("jarid"))
    restore = _restore_settings(
        req, body.savepoint_path, body.allow_non_restored_state, body.claim_mode or body.restore_mode
    )
    invocation = _invocation(req, program, body, _job_id(body.job_id, "jobId"), restore)
    job_id = await _submit(req, invocation)
    return JarRunResponseBody(jobid=job_id, application_id=job_id)


async def run_application_jar(req: HandlerRequest) -> JarRunApplicationResponseBody:
    store = _store(req)
    body = await req.body(JarRunApplicationRequestBody)
    program = await asyncio.to_thread(store.get, req.path_param("jarid"))
    restore = _restore_settings(req, body.savepoint_path, body.allow_non_restored_state, body.claim_mode)
    job_id = _job_id(body.job_id, "jobId")
    application_id = _job_id(body.application_id, "applicationId")
    if job_id is not None and application_id is not None and job_id != application_id:
        raise RestRequestError(
            "In flott an application is its one job, under the job's id: applicationId and jobId must "
            f"be equal when both are given (got {application_id} and {job_id})."
        )
    invocation = _invocation(req, program, body, job_id or application_id, restore)
    return JarRunApplicationResponseBody(applicationid=await _submit(req, invocation))


_JAR_QUERY = (
    QueryParam("programArg", "Comma-separated list of program arguments."),
    QueryParam("entry-class", "The entry module of an uploaded archive (Flink: the entry point class)."),
    QueryParam(
        "parallelism",
        "Positive integer value that specifies the desired parallelism for the job.",
        {"type": "integer", "format": "int32", "minimum": 1, "maximum": INT32_MAX},
    ),
)
_RUN_QUERY = (
    QueryParam(
        "allowNonRestoredState",
        "Boolean value that specifies whether the job submission should be rejected if the savepoint "
        "contains state that cannot be mapped back to the job.",
        {"type": "boolean"},
    ),
    QueryParam(
        "savepointPath", "String value that specifies the path of the savepoint to restore the job from."
    ),
    *_JAR_QUERY,
)

ROUTES = [
    RestRoute(
        "GET",
        "/jars",
        list_jars,
        summary="Returns the Python programs uploaded via '/jars/upload', newest first.",
        response_type=JarListInfo,
        operation_id="getJarList",
    ),
    RestRoute(
        "POST",
        "/jars/upload",
        upload_jar,
        summary="Uploads a Python program (a .py script, or a .zip of its modules) as one multipart file "
        "part, as Flink's CLI and web UI upload a jar.",
        response_type=JarUploadResponseBody,
        operation_id="uploadJar",
        file_upload=True,
    ),
    RestRoute(
        "DELETE",
        "/jars/{jarid}",
        delete_jar,
        summary="Deletes a program uploaded via '/jars/upload'.",
        response_type=EmptyResponseBody,
        operation_id="deleteJar",
    ),
    RestRoute(
        "POST",
        "/jars/{jarid}/plan",
        plan_jar,
        summary="Returns the dataflow plan of the uploaded program's job (planned in a child process).",
        request_type=JarPlanRequestBody,
        response_type=JobPlanInfo,
        query=_JAR_QUERY,
        operation_id="generatePlanFromJar",
    ),
    RestRoute(
        "POST",
        "/jars/{jarid}/run",
        run_jar,
        summary="Submits the job of an uploaded program (planned in a child process).",
        request_type=JarRunRequestBody,
        response_type=JarRunResponseBody,
        query=_RUN_QUERY,
        operation_id="submitJobFromJar",
    ),
    RestRoute(
        "POST",
        "/jars/{jarid}/run-application",
        run_application_jar,
        status=202,
        summary="Submits an uploaded program as an application (in flott: its one job, under the job's id).",
        request_type=JarRunApplicationRequestBody,
        response_type=JarRunApplicationResponseBody,
        query=_RUN_QUERY,
        operation_id="submitApplicationFromJar",
    ),
]
