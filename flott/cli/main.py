"""The ``flott`` command line (Flink's ``bin/flink`` and cluster scripts)."""

from __future__ import annotations

import sys

import click

from flott.cli.application_commands import run_application_command, start_application_command
from flott.cli.options import config_option, dynamic_option, jm_option, load_config, token_option
from flott.cli.run_options import run_command
from flott.configuration import Configuration, is_sensitive


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("flott")
    except PackageNotFoundError:
        return "unknown"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", count=True, help="More on the console: -v info, -vv debug, tracebacks.")
@click.version_option(_version(), "--version", "-version", message="Version: %(version)s")
@click.pass_context
def cli(ctx: click.Context, verbose: int) -> None:
    """flott: Apache Flink's runtime, native in Python."""
    ctx.obj = {"verbose": verbose}


cli.add_command(run_command)


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@config_option
@dynamic_option
@click.option("-p", "--parallelism", type=int, default=None)
@click.argument("script", type=click.Path(exists=True, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def info(
    conf_dir: str | None,
    dynamic: tuple[str, ...],
    parallelism: int | None,
    script: str,
    args: tuple[str, ...],
) -> None:
    """Print the job's plan as JSON without running it."""
    from flott.cli.info_command import print_plan

    config = load_config(
        conf_dir, dynamic, overrides={"parallelism.default": str(parallelism) if parallelism else None}
    )
    sys.exit(print_plan(script, args, config))


@cli.command(name="list")
@jm_option
@token_option
@config_option
@dynamic_option
@click.option("-r", "--running", is_flag=True, help="Running jobs.")
@click.option("-s", "--scheduled", is_flag=True, help="Scheduled jobs.")
@click.option("-a", "--all", "show_all", is_flag=True, help="All jobs, finished ones included.")
def list_cmd(
    jobmanager: str | None,
    token: str | None,
    conf_dir: str | None,
    dynamic: tuple[str, ...],
    running: bool,
    scheduled: bool,
    show_all: bool,
) -> None:
    """List the cluster's jobs as a table."""
    from flott.cli.job_commands import list_jobs

    sys.exit(list_jobs(load_config(conf_dir, dynamic), jobmanager, running, scheduled, show_all, token))


_format_option = click.option(
    "-t",
    "--type",
    "format_type",
    type=click.Choice(["canonical", "native"], case_sensitive=False),
    default="canonical",
    show_default=True,
    help="Savepoint format (flott writes one backend-independent format for both).",
)
_detached_option = click.option(
    "-detached",
    "--detached",
    is_flag=True,
    help="Only trigger: print the trigger id and return without waiting.",
)


@cli.command()
@jm_option
@token_option
@config_option
@dynamic_option
@click.option(
    "-s",
    "--withSavepoint",
    "savepoint_dir",
    default=None,
    is_flag=False,
    flag_value="",
    metavar="[DIR]",
    help="Take a savepoint (to DIR, or the default savepoint directory) before cancelling. "
    "Deprecated in Flink: use 'stop'.",
)
@_format_option
@click.argument("job_id")
def cancel(
    jobmanager: str | None,
    token: str | None,
    conf_dir: str | None,
    dynamic: tuple[str, ...],
    savepoint_dir: str | None,
    format_type: str,
    job_id: str,
) -> None:
    """Cancel the job JOB_ID."""
    from flott.cli.job_commands import cancel_job, cancel_with_savepoint

    config = load_config(conf_dir, dynamic)
    if savepoint_dir is not None:
        sys.exit(
            cancel_with_savepoint(
                config, jobmanager, job_id, savepoint_dir or None, format_type.upper(), token
            )
        )
    sys.exit(cancel_job(config, jobmanager, job_id, token))


@cli.command()
@jm_option
@token_option
@config_option
@dynamic_option
@click.option(
    "-p",
    "--savepointPath",
    "savepoint_path",
    default=None,
    is_flag=False,
    flag_value="",
    metavar="[DIR]",
    help="Directory for the savepoint (default: execution.checkpointing.savepoint-dir of the job or "
    "the cluster).",
)
@click.option(
    "-d",
    "--drain",
    is_flag=True,
    help="Send MAX_WATERMARK before the savepoint, so every event-time timer and window fires. "
    "Only for stopping a job for good.",
)
@_format_option
@_detached_option
@click.argument("job_id")
def stop(
    jobmanager: str | None,
    token: str | None,
    conf_dir: str | None,
    dynamic: tuple[str, ...],
    savepoint_path: str | None,
    drain: bool,
    format_type: str,
    detached: bool,
    job_id: str,
) -> None:
    """Stop JOB_ID with a savepoint; the job ends FINISHED and the savepoint's path is printed."""
    from flott.cli.job_commands import stop_with_savepoint

    config = load_config(conf_dir, dynamic)
    sys.exit(
        stop_with_savepoint(
            config, jobmanager, job_id, savepoint_path or None, drain, format_type.upper(), detached, token
        )
    )


@cli.command(no_args_is_help=True)
@jm_option
@token_option
@config_option
@dynamic_option
@click.option(
    "-d",
    "--dispose",
    default=None,
    metavar="PATH",
    help="Dispose the savepoint at PATH: the cluster deletes its files.",
)
@_format_option
@_detached_option
@click.argument("args", nargs=-1, metavar="JOBID [DIR] | inspect PATH")
def savepoint(
    jobmanager: str | None,
    token: str | None,
    conf_dir: str | None,
    dynamic: tuple[str, ...],
    dispose: str | None,
    format_type: str,
    detached: bool,
    args: tuple[str, ...],
) -> None:
    """Trigger a savepoint of JOBID (to DIR, or the default savepoint directory), dispose one with
    -d PATH, or show what one holds with 'flott savepoint inspect PATH' (no cluster needed)."""
    if args and args[0] == "inspect":
        if len(args) != 2:
            raise click.UsageError("flott savepoint inspect PATH: exactly one PATH expected")
        from flott.cli.savepoint_inspect import inspect_savepoint

        sys.exit(inspect_savepoint(args[1]))
    from flott.cli.job_commands import dispose_savepoint, trigger_savepoint

    config = load_config(conf_dir, dynamic)
    if dispose is not None:
        if args:
            raise click.UsageError("--dispose PATH takes no JOBID")
        sys.exit(dispose_savepoint(config, jobmanager, dispose, token))
    if not args or len(args) > 2:
        raise click.UsageError("expected JOBID [DIR], --dispose PATH or inspect PATH")
    target = args[1] if len(args) == 2 else None
    sys.exit(trigger_savepoint(config, jobmanager, args[0], target, format_type.upper(), detached, token))


@cli.command()
@jm_option
@token_option
@config_option
@dynamic_option
@click.option("-full", "--full", is_flag=True, help="A full checkpoint (flott's checkpoints always are).")
@click.argument("job_id")
def checkpoint(
    jobmanager: str | None,
    token: str | None,
    conf_dir: str | None,
    dynamic: tuple[str, ...],
    full: bool,
    job_id: str,
) -> None:
    """Take a checkpoint of JOB_ID now and print its id."""
    from flott.cli.job_commands import trigger_checkpoint

    sys.exit(trigger_checkpoint(load_config(conf_dir, dynamic), jobmanager, job_id, full, token))


@cli.command()
@jm_option
@token_option
@config_option
@dynamic_option
@click.option("-f", "--follow", is_flag=True, help="Follow until the job ends (exit 1 unless FINISHED).")
@click.option("-n", "--tail", type=click.IntRange(min=1), default=None, help="Only the last N lines.")
@click.option("--timestamps", is_flag=True, help="Prefix each line with when it was written.")
@click.argument("job_id")
def logs(
    jobmanager: str | None,
    token: str | None,
    conf_dir: str | None,
    dynamic: tuple[str, ...],
    follow: bool,
    tail: int | None,
    timestamps: bool,
    job_id: str,
) -> None:
    """Print JOB_ID's own log (its tasks' output, its status changes), also after it ended."""
    from flott.cli.logs_command import print_job_logs

    config = load_config(conf_dir, dynamic)
    sys.exit(print_job_logs(config, jobmanager, job_id, follow, tail, timestamps, token))


@cli.group()
def jobmanager() -> None:
    """The JobManager process."""


@jobmanager.command(name="start")
@config_option
@dynamic_option
@click.option("--taskmanagers", type=int, default=0, help="Also start this many local TaskManager processes.")
def jobmanager_start(conf_dir: str | None, dynamic: tuple[str, ...], taskmanagers: int) -> None:
    """Run a session-cluster JobManager in the foreground (REST on rest.port)."""
    from flott.cli.cluster_commands import run_jobmanager

    sys.exit(run_jobmanager(load_config(conf_dir, dynamic, "standalonesession", True), taskmanagers))


@cli.group()
def taskmanager() -> None:
    """The TaskManager (TaskExecutor) process."""


@taskmanager.command(name="start")
@click.option(
    "-m",
    "--jobmanager",
    "jm_address",
    default=None,
    metavar="HOST:PORT",
    help="RPC address of the JobManager (default: jobmanager.rpc.address:jobmanager.rpc.port).",
)
@config_option
@dynamic_option
def taskmanager_start(jm_address: str | None, conf_dir: str | None, dynamic: tuple[str, ...]) -> None:
    """Run a TaskManager in the foreground; it registers with the JobManager's ResourceManager."""
    from flott.cli.cluster_commands import run_taskmanager

    sys.exit(run_taskmanager(load_config(conf_dir, dynamic, "taskexecutor", True), jm_address))


@cli.group()
def cluster() -> None:
    """A local session cluster in the background."""


@cluster.command(name="start")
@click.option("--taskmanagers", type=int, default=1, show_default=True)
@config_option
@dynamic_option
def cluster_start(taskmanagers: int, conf_dir: str | None, dynamic: tuple[str, ...]) -> None:
    """Start a JobManager and TASKMANAGERS TaskManagers; returns once the REST API answers."""
    from flott.cli.cluster_commands import start_cluster

    # Secrets go to the background JobManager in its environment, not on its command line (ps).
    plain = [d for d in dynamic if not is_sensitive(d.partition("=")[0].strip())]
    passthrough = (["--configDir", conf_dir] if conf_dir else []) + [a for d in plain for a in ("-D", d)]
    config = load_config(conf_dir, dynamic)
    secrets = {k: v for k, v in Configuration.parse_dynamic(dynamic).items() if is_sensitive(k)}
    sys.exit(start_cluster(config, taskmanagers, passthrough, secrets))


@cluster.command(name="stop")
@config_option
@dynamic_option
def cluster_stop(conf_dir: str | None, dynamic: tuple[str, ...]) -> None:
    """Stop the cluster started with 'flott cluster start' (and every process it started)."""
    from flott.cli.cluster_commands import stop_cluster

    sys.exit(stop_cluster(load_config(conf_dir, dynamic)))


cli.add_command(run_application_command)
jobmanager.add_command(start_application_command)


def main() -> None:
    cli(prog_name="flott")


if __name__ == "__main__":
    main()
