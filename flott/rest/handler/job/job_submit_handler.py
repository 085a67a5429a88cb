"""``POST /jobs``: Flink's multipart job submission (Flink: JobSubmitHandler + FileUploadHandler).

The request is ``multipart/form-data``: an attribute ``request`` holding
:class:`JobSubmitRequestBody` JSON, and one file part per file it names (the
serialised JobGraph, jars, artifacts). Flink's CLI sends it with chunked
transfer encoding, so the size is only known while reading: parts are streamed
to a per-request directory under the endpoint's upload dir and the running
total is checked against ``rest.server.max-content-length`` (413 past it).

Files are stored under generated names (``file_0``, ``file_1`` ...), never
under the client's name, and client names with path separators or ``..`` are
rejected with 400, so no upload can escape its directory. The JobGraph file
is decoded as data (never unpickled) and deleted; artifacts are handed to the
Dispatcher, which puts the Python files into the BlobServer before it accepts
the job. Whatever the outcome, the request's directory is removed when the
request ends, so finished (or refused) jobs leave nothing in the upload dir.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import msgspec
from aiohttp import BodyPartReader, web

from flott.errors import FlottError, InvalidJobGraphError, PayloadTooLargeError, RestRequestError
from flott.rest.body_reading import within_idle_timeout
from flott.rest.handler.handler import HandlerRequest, RestRoute
from flott.rest.messages.job import JobSubmitRequestBody, JobSubmitResponseBody
from flott.runtime.jobgraph import JobGraph, decode_job_graph
from flott.runtime.messages.job_artifacts import ArtifactKind, JobArtifact

_CHUNK = 256 * 1024
_JAVA_SERIALIZATION_MAGIC = b"\xac\xed"


@dataclass(frozen=True)
class _StoredFile:
    path: Path
    size: int
    sha256: str


@dataclass
class _Upload:
    request_json: bytes | None
    files: dict[str, _StoredFile]


def too_large(limit: int) -> PayloadTooLargeError:
    return PayloadTooLargeError(
        f"Request entity too large: the request exceeds the maximum content length of {limit} bytes "
        "(rest.server.max-content-length)."
    )


MAX_FILE_NAME_BYTES = 255
"""Longest file name (UTF-8 bytes) most filesystems store."""
MAX_ENTRY_NAME_BYTES = 200
"""Longest artifact entry name: TaskExecutors lay an archive out as ``archive_<n>_<stem>``, so an
entry name needs room below the filesystem's 255 bytes (longer ones failed the job later with
ENAMETOOLONG instead of being refused here)."""


def check_file_name(name: str, max_bytes: int = MAX_FILE_NAME_BYTES, what: str = "") -> str:
    """A client-given file name, accepted only if it cannot name anything outside the upload dir."""
    if (
        not name
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or any(ord(c) < 32 for c in name)
        or len(name.encode("utf-8", "surrogatepass")) > max_bytes
    ):
        shown = name if len(name) <= 80 else name[:80] + "..."
        raise RestRequestError(
            f"Illegal file name {shown!r}{f' ({what})' if what else ''} in the job submission: names must "
            "be plain names "
            f"(no path separators, not '.' or '..', no control characters, at most {max_bytes} bytes "
            "in UTF-8)."
        )
    return name


async def receive_multipart(request: web.Request, dest: Path, limit: int, idle_s: float) -> _Upload:
    """Stream every part into ``dest``, counting bytes against ``limit``; each read waits at most
    ``idle_s`` for data (``flott.rest.body-idle-timeout``)."""
    try:
        reader = await request.multipart()
    except (AssertionError, ValueError, KeyError) as e:
        raise RestRequestError(f"Malformed multipart/form-data request: {e}") from None
    upload = _Upload(None, {})
    total = 0
    index = 0
    while True:
        try:
            part = await within_idle_timeout(reader.next(), idle_s)
        except FlottError:
            raise
        except Exception as e:  # aiohttp raises assorted errors for broken multipart framing
            raise RestRequestError(
                f"Malformed multipart/form-data request: {e or type(e).__name__}"
            ) from None
        if part is None:
            return upload
        if not isinstance(part, BodyPartReader):
            raise RestRequestError(
                "Malformed multipart/form-data request: nested multipart parts are not supported."
            )
        try:
            filename = part.filename
            if filename is None:
                if part.name != "request":
                    raise RestRequestError(
                        f"Unknown form attribute {part.name!r}: {request.method} {request.path} takes "
                        "file parts and at most the attribute 'request'."
                    )
                if upload.request_json is not None:
                    raise RestRequestError("The attribute 'request' was sent more than once.")
                data = bytearray()
                while chunk := await within_idle_timeout(part.read_chunk(_CHUNK), idle_s):
                    total += len(chunk)
                    if total > limit:
                        raise too_large(limit)
                    data += chunk
                upload.request_json = bytes(data)
                continue
            check_file_name(filename)
            if filename in upload.files:
                raise RestRequestError(f"The file {filename!r} was uploaded more than once.")
            path = dest / f"file_{index}"
            index += 1
            digest = hashlib.sha256()
            size = 0
            with path.open("wb") as f:
                while chunk := await within_idle_timeout(part.read_chunk(_CHUNK), idle_s):
                    total += len(chunk)
                    if total > limit:
                        raise too_large(limit)
                    f.write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
            upload.files[filename] = _StoredFile(path, size, digest.hexdigest())
        except FlottError:
            raise
        except Exception as e:
            raise RestRequestError(
                f"Malformed multipart/form-data request: {e or type(e).__name__}"
            ) from None


def _decode_graph(name: str, data: bytes) -> JobGraph:
    if data.startswith(_JAVA_SERIALIZATION_MAGIC):
        raise InvalidJobGraphError(
            f"The job graph file {name!r} is a Java-serialised Flink JobGraph/ExecutionPlan, as Flink's own "
            "client (flink run) sends. flott runs Python jobs and reads only flott JobGraphs: submit with "
            "`flott run -m <host>:<port> script.py` or flott's RestClusterClient."
        )
    try:
        return decode_job_graph(data)
    except InvalidJobGraphError as e:
        raise InvalidJobGraphError(f"The job graph file {name!r} could not be read: {e}") from None


def _keep_files(
    upload: _Upload, graph_name: str, named: list[tuple[str, str, ArtifactKind | None]], request_dir: Path
) -> tuple[JobGraph, Path, list[JobArtifact]]:
    """Decode the graph (and drop its file); move the rest to a directory named after the job."""
    graph_file = upload.files[graph_name]
    job_graph = _decode_graph(graph_name, graph_file.path.read_bytes())
    graph_file.path.unlink()
    job_dir = request_dir.rename(request_dir.parent / f"job-{job_graph.job_id}-{request_dir.name}")
    artifacts = [
        JobArtifact(
            entry_name=entry,
            path=str(job_dir / upload.files[name].path.name),
            size=upload.files[name].size,
            sha256=upload.files[name].sha256,
            kind=kind,
        )
        for name, entry, kind in named
        if kind is not None
    ]
    return job_graph, job_dir, artifacts


def _parse_request(raw: bytes | None) -> JobSubmitRequestBody:
    if raw is None:
        raise RestRequestError(
            "Request did not match expected format JobSubmitRequestBody. "
            "(the multipart attribute 'request' is missing)"
        )
    try:
        return msgspec.json.decode(raw, type=JobSubmitRequestBody)
    except (msgspec.ValidationError, msgspec.DecodeError) as e:
        raise RestRequestError(f"Request did not match expected format JobSubmitRequestBody. ({e})") from None


async def submit_job(req: HandlerRequest) -> JobSubmitResponseBody:
    limit = req.context.max_content_length
    request = req.request
    if request.content_length is not None and request.content_length > limit:
        raise too_large(limit)
    if request.content_type != "multipart/form-data":
        raise RestRequestError(
            f"POST /jobs expects multipart/form-data (a 'request' attribute plus file parts), got "
            f"{request.content_type or 'no content type'}."
        )
    req.context.upload_dir.mkdir(parents=True, exist_ok=True)
    request_dir = Path(tempfile.mkdtemp(prefix="submission-", dir=req.context.upload_dir))
    try:
        upload = await receive_multipart(request, request_dir, limit, req.context.body_idle_timeout_s)
        body = _parse_request(upload.request_json)
        graph_name = body.job_graph_file_name or body.execution_plan_file_name
        if graph_name is None:
            raise RestRequestError("The jobGraphFileName field must not be omitted or be null.")
        named: list[tuple[str, str, ArtifactKind | None]] = [(graph_name, graph_name, None)]
        named += [(n, n, "jar") for n in body.job_jar_file_names]
        named += [(a.file_name, a.entry_name, "artifact") for a in body.job_artifact_file_names]
        for file_name, entry_name, _ in named:
            check_file_name(file_name)
            check_file_name(entry_name, MAX_ENTRY_NAME_BYTES, "an artifact entry name")
        if len(upload.files) != len({n for n, _, _ in named}):
            raise RestRequestError(
                f"The number of uploaded files ({len(upload.files)}) does not match the number of files "
                f"named in the request ({len({n for n, _, _ in named})})."
            )
        for file_name, _, _ in named:
            if file_name not in upload.files:
                raise RestRequestError(f"The file {file_name!r} named in the request was not uploaded.")
        # Reading and validating a graph costs time growing with its size: off the event loop.
        job_graph, request_dir, artifacts = await asyncio.to_thread(
            _keep_files, upload, graph_name, named, request_dir
        )
        gateway = await req.gateway()
        await gateway.submit_job_with_artifacts(job_graph, artifacts)
    finally:
        # Accepted or not, the uploads are not needed any more: an accepted job's Python files are
        # in the BlobServer now (and in HA storage), its jars are only recorded.
        await asyncio.to_thread(shutil.rmtree, request_dir, True)
    return JobSubmitResponseBody(job_url=f"/jobs/{job_graph.job_id}")


ROUTES = [
    RestRoute(
        "POST",
        "/jobs",
        submit_job,
        status=202,
        file_upload=True,
        summary="Submits a job: multipart/form-data with a 'request' attribute (JobSubmitRequestBody) "
        "and one file part per file it names (the flott JobGraph, artifacts, jars).",
        request_type=JobSubmitRequestBody,
        response_type=JobSubmitResponseBody,
        operation_id="submitJob",
    ),
]
