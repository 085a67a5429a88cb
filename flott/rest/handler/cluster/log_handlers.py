"""Log files and a TaskManager's thread dump over REST (Flink: JobManagerLogListHandler,
JobManagerLogFileHandler, JobManagerCustomLogHandler, JobManagerStdoutFileHandler, their
TaskManager counterparts and TaskManagerThreadDumpHandler).

The JobManager's files are read in the REST endpoint's own process (the JobManager's); a
TaskManager's come from its TaskExecutor over RPC (Dispatcher → ResourceManager →
TaskExecutor). Both are confined to the process's log directory and read as their last
bytes (:mod:`flott.runtime.entrypoint.log_files`). Files answer as ``text/plain``, as Flink's
file handlers do; errors (a name with a path, a missing file, a symlink pointing out of the
log directory) answer with Flink's JSON error body.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from flott.rest.handler.cluster.jobmanager_handlers import thread_dump_info
from flott.rest.handler.handler import HandlerRequest, RestRoute
from flott.rest.handler.taskmanager.taskmanager_handlers import task_executor_of
from flott.rest.messages.cluster import LogInfo, LogListInfo, ThreadDumpInfo
from flott.runtime.entrypoint.log_files import DEFAULT_MAX_BYTES, LogFileInfo, LogFiles, check_file_name

_TEXT = "text/plain; charset=UTF-8"


def _text(data: bytes) -> web.Response:
    return web.Response(body=data, headers={"Content-Type": _TEXT})


def _list(infos: list[LogFileInfo]) -> LogListInfo:
    return LogListInfo(logs=[LogInfo(name=i.name, size=i.size, mtime=i.mtime) for i in infos])


def _jobmanager_files(req: HandlerRequest) -> LogFiles:
    return LogFiles.of_this_process(req.config, "JobManager")


async def _jobmanager_read(req: HandlerRequest, kind: str, name: str = "") -> web.Response:
    files = _jobmanager_files(req)
    return _text(await asyncio.to_thread(files.read, kind, name, DEFAULT_MAX_BYTES))


async def jobmanager_logs(req: HandlerRequest) -> LogListInfo:
    """The files of the JobManager's log directory (``env.log.dir``, else where it logs)."""
    return _list(await asyncio.to_thread(_jobmanager_files(req).list))


async def jobmanager_log(req: HandlerRequest) -> web.Response:
    return await _jobmanager_read(req, "log")


async def jobmanager_stdout(req: HandlerRequest) -> web.Response:
    return await _jobmanager_read(req, "stdout")


async def jobmanager_log_file(req: HandlerRequest) -> web.Response:
    return await _jobmanager_read(req, "file", check_file_name(req.path_param("filename")))


async def taskmanager_thread_dump(req: HandlerRequest) -> ThreadDumpInfo:
    """The TaskExecutor's Python threads, asked over RPC (Flink: TaskManagerThreadDumpHandler)."""
    info = await task_executor_of(req)
    return thread_dump_info(await (await req.gateway()).request_task_manager_thread_dump(info.resource_id))


async def taskmanager_logs(req: HandlerRequest) -> LogListInfo:
    info = await task_executor_of(req)
    return _list(await (await req.gateway()).request_task_manager_log_list(info.resource_id))


async def _taskmanager_read(req: HandlerRequest, kind: str, name: str = "") -> web.Response:
    info = await task_executor_of(req)
    gateway = await req.gateway()
    return _text(await gateway.request_task_manager_log_file(info.resource_id, kind, name, DEFAULT_MAX_BYTES))


async def taskmanager_log(req: HandlerRequest) -> web.Response:
    return await _taskmanager_read(req, "log")


async def taskmanager_stdout(req: HandlerRequest) -> web.Response:
    return await _taskmanager_read(req, "stdout")


async def taskmanager_log_file(req: HandlerRequest) -> web.Response:
    return await _taskmanager_read(req, "file", check_file_name(req.path_param("filename")))


_TAIL = f"(text/plain; at most the last {DEFAULT_MAX_BYTES // (1024 * 1024)} MiB)"
_TM = "/taskmanagers/{taskmanagerid}"

ROUTES = [
    RestRoute(
        "GET",
        "/jobmanager/logs",
        jobmanager_logs,
        summary="The files in the JobManager's log directory, with sizes.",
        response_type=LogListInfo,
        operation_id="getJobManagerLogList",
    ),
    RestRoute(
        "GET",
        "/jobmanager/logs/{filename}",
        jobmanager_log_file,
        summary=f"One file of the JobManager's log directory {_TAIL}.",
        operation_id="getJobManagerCustomLog",
    ),
    RestRoute(
        "GET",
        "/jobmanager/log",
        jobmanager_log,
        summary=f"The JobManager's log file {_TAIL}.",
        operation_id="getJobManagerLog",
    ),
    RestRoute(
        "GET",
        "/jobmanager/stdout",
        jobmanager_stdout,
        summary=f"The JobManager's stdout file {_TAIL}.",
        operation_id="getJobManagerStdout",
    ),
    RestRoute(
        "GET",
        f"{_TM}/thread-dump",
        taskmanager_thread_dump,
        summary="Stacks of a TaskManager's Python threads.",
        response_type=ThreadDumpInfo,
        operation_id="getTaskManagerThreadDump",
    ),
    RestRoute(
        "GET",
        f"{_TM}/logs",
        taskmanager_logs,
        summary="The files in a TaskManager's log directory, with sizes.",
        response_type=LogListInfo,
        operation_id="getTaskManagerLogList",
    ),
    RestRoute(
        "GET",
        f"{_TM}/logs/{{filename}}",
        taskmanager_log_file,
        summary=f"One file of a TaskManager's log directory {_TAIL}.",
        operation_id="getTaskManagerCustomLog",
    ),
    RestRoute(
        "GET",
        f"{_TM}/log",
        taskmanager_log,
        summary=f"A TaskManager's log file {_TAIL}.",
        operation_id="getTaskManagerLog",
    ),
    RestRoute(
        "GET",
        f"{_TM}/stdout",
        taskmanager_stdout,
        summary=f"A TaskManager's stdout file {_TAIL}.",
        operation_id="getTaskManagerStdout",
    ),
]
