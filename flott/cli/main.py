"""The ``flott`` command line (Flink's ``bin/flink`` and cluster scripts)."""

from __future__ import annotations

import logging
import sys

import click

from flott.cli.application_commands import run_application_command, start_application_command
from flott.configuration import Configuration, is_sensitive, take_secrets_from_environment
from flott.errors import ConfigurationError


def _load_config(config_file: str | None, dynamic: tuple[str, ...], **overrides: str | None) -> Configuration:
    try:
        values = {**Configuration.parse_dynamic(dynamic), **take_secrets_from_environment()}
        for key, value in overrides.items():
            if value is not None:
                values[key] = value
        return Configuration.load(config_file, values)
    except ConfigurationError as e:
        raise click.UsageError(str(e)) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", count=True, help="More logging (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """flott: Apache Flink's runtime, native in Python."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


_config_option = click.option(
    "-c",
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="A flott/Flink-style YAML config file.",
)
_dynamic_option = click.option(
    "-D", "dynamic", multiple=True, metavar="KEY=VALUE", help="Set a configuration key."
)
_jm_option = click.option(
    "-m",
    "--jobmanager",
    default=None,
    metavar="HOST:PORT",
    help="REST address of the cluster (default: rest.address:rest.port).",
)


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("-p", "--parallelism", type=int, default=None, help="Default parallelism of the job.")
@click.option("-d", "--detached", is_flag=True, help="Submit and return without waiting for the job.")
@_jm_option
@click.option(
    "-s",
    "--fromSavepoint",
    "savepoint",
    default=None,
    metavar="PATH",
    help="Savepoint (or retained checkpoint) to restore the job from (execution.savepoint.path).",
)
@click.option(
    "-n",
    "--allowNonRestoredState",
    "allow_non_restored_state",
    is_flag=True,
    help="Start even if state in the savepoint belongs to no operator of the job "
    "(execution.savepoint.ignore-unclaimed-state).",
)
@click.option(
    "-pyfs",
    "--pyFiles",
    "py_files",
    default=None,
    help="Extra Python files for the job, comma-separated: .py files, .zip/.whl/.egg archives and "
    "directories. They are importable by the script and, shipped through the cluster's BlobServer, "
    "by the job's functions on the TaskExecutors.",
)
@click.option(
    "-pyreq",
    "--pyRequirements",
    "py_requirements",
    default=None,
    metavar="FILE[#DIR]",
    help="A requirements.txt the TaskExecutors pip-install for the job; after '#', a directory of "
    "distributions to install from without an index (PyFlink's requirements cache).",
)
@_config_option
@_dynamic_option
@click.argument("script", type=click.Path())
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(
    parallelism: int | None,
    detached: bool,
    jobmanager: str | None,
    savepoint: str | None,
    allow_non_restored_state: bool,
    py_files: str | None,
    py_requirements: str | None,
    config_file: str | None,
    dynamic: tuple[str, ...],
    script: str,
    args: tuple[str, ...],
) -> None:
    """Run SCRIPT (a PyFlink-style program): embedded, or on the cluster at -m. ARGS go to the script."""
    from flott.cli.run_command import run_script

    config = _load_config(
        config_file,
        dynamic,
        **{
            "parallelism.default": str(parallelism) if parallelism else None,
            "execution.savepoint.path": savepoint,
            "execution.savepoint.ignore-unclaimed-state": "true" if allow_non_restored_state else None,
            "python.files": py_files,
            "python.requirements": py_requirements,
        },
    )
    sys.exit(run_script(script, args, config, detached, jobmanager))


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@_config_option
@_dynamic_option
@click.option("-p", "--parallelism", type=int, default=None)
@click.argument("script", type=click.Path(exists=True, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def info(
    config_file: str | None,
    dynamic: tuple[str, ...],
    parallelism: int | None,
    script: str,
    args: tuple[str, ...],
) -> None:
    """Print the job's plan as JSON without running it."""
    from flott.cli.info_command import print_plan

    config = _load_config(
        config_file, dynamic, **{"parallelism.default": str(parallelism) if parallelism else None}
    )
    sys.exit(print_plan(script, args, config))


@cli.command(name="list")
@_jm_option
@_config_option
@_dynamic_option
@click.option("-r", "--running", is_flag=True, help="Running jobs.")
@click.option("-s", "--scheduled", is_flag=True, help="Scheduled jobs.")
@click.option("-a", "--all", "show_all", is_flag=True, help="All jobs, finished ones included.")
def list_cmd(
    jobmanager: str | None,
    config_file: str | None,
    dynamic: tuple[str, ...],
    running: bool,
    scheduled: bool,
    show_all: bool,
) -> None:
    """List the cluster's jobs as a table."""
    from flott.cli.job_commands import list_jobs

    sys.exit(list_jobs(_load_config(config_file, dynamic), jobmanager, running, scheduled, show_all))


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
@_jm_option
@_config_option
@_dynamic_option
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
    config_file: str | None,
    dynamic: tuple[str, ...],
    savepoint_dir: str | None,
    format_type: str,
    job_id: str,
) -> None:
    """Cancel the job JOB_ID."""
    from flott.cli.job_commands import cancel_job, cancel_with_savepoint

    config = _load_config(config_file, dynamic)
    if savepoint_dir is not None:
        sys.exit(
            cancel_with_savepoint(config, jobmanager, job_id, savepoint_dir or None, format_type.upper())
        )
    sys.exit(cancel_job(config, jobmanager, job_id))


@cli.command()
@_jm_option
@_config_option
@_dynamic_option
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
    config_file: str | None,
    dynamic: tuple[str, ...],
    savepoint_path: str | None,
    drain: bool,
    format_type: str,
    detached: bool,
    job_id: str,
) -> None:
    """Stop JOB_ID with a savepoint; the job ends FINISHED and the savepoint's path is printed."""
    from flott.cli.job_commands import stop_with_savepoint

    config = _load_config(config_file, dynamic)
    sys.exit(
        stop_with_savepoint(
            config, jobmanager, job_id, savepoint_path or None, drain, format_type.upper(), detached
        )
    )


@cli.command(no_args_is_help=True)
@_jm_option
@_config_option
@_dynamic_option
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
    config_file: str | None,
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

    config = _load_config(config_file, dynamic)
    if dispose is not None:
        if args:
            raise click.UsageError("--dispose PATH takes no JOBID")
        sys.exit(dispose_savepoint(config, jobmanager, dispose))
    if not args or len(args) > 2:
        raise click.UsageError("expected JOBID [DIR], --dispose PATH or inspect PATH")
    target = args[1] if len(args) == 2 else None
    sys.exit(trigger_savepoint(config, jobmanager, args[0], target, format_type.upper(), detached))


@cli.command()
@_jm_option
@_config_option
@_dynamic_option
@click.option("-full", "--full", is_flag=True, help="A full checkpoint (flott's checkpoints always are).")
@click.argument("job_id")
def checkpoint(
    jobmanager: str | None, config_file: str | None, dynamic: tuple[str, ...], full: bool, job_id: str
) -> None:
    """Take a checkpoint of JOB_ID now and print its id."""
    from flott.cli.job_commands import trigger_checkpoint

    sys.exit(trigger_checkpoint(_load_config(config_file, dynamic), jobmanager, job_id, full))


@cli.group()
def jobmanager() -> None:
    """The JobManager process."""


@jobmanager.command(name="start")
@_config_option
@_dynamic_option
@click.option("--taskmanagers", type=int, default=0, help="Also start this many local TaskManager processes.")
def jobmanager_start(config_file: str | None, dynamic: tuple[str, ...], taskmanagers: int) -> None:
    """Run a session-cluster JobManager in the foreground (REST on rest.port)."""
    from flott.cli.cluster_commands import run_jobmanager

    sys.exit(run_jobmanager(_load_config(config_file, dynamic), taskmanagers))


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
@_config_option
@_dynamic_option
def taskmanager_start(jm_address: str | None, config_file: str | None, dynamic: tuple[str, ...]) -> None:
    """Run a TaskManager in the foreground; it registers with the JobManager's ResourceManager."""
    from flott.cli.cluster_commands import run_taskmanager

    sys.exit(run_taskmanager(_load_config(config_file, dynamic), jm_address))


@cli.group()
def cluster() -> None:
    """A local session cluster in the background."""


@cluster.command(name="start")
@click.option("--taskmanagers", type=int, default=1, show_default=True)
@_config_option
@_dynamic_option
def cluster_start(taskmanagers: int, config_file: str | None, dynamic: tuple[str, ...]) -> None:
    """Start a JobManager and TASKMANAGERS TaskManagers; returns once the REST API answers."""
    from flott.cli.cluster_commands import start_cluster

    # Secrets go to the background JobManager in its environment, not on its command line (ps).
    plain = [d for d in dynamic if not is_sensitive(d.partition("=")[0].strip())]
    passthrough = (["-c", config_file] if config_file else []) + [a for d in plain for a in ("-D", d)]
    config = _load_config(config_file, dynamic)
    secrets = {k: v for k, v in Configuration.parse_dynamic(dynamic).items() if is_sensitive(k)}
    sys.exit(start_cluster(config, taskmanagers, passthrough, secrets))


@cluster.command(name="stop")
@_config_option
@_dynamic_option
def cluster_stop(config_file: str | None, dynamic: tuple[str, ...]) -> None:
    """Stop the cluster started with 'flott cluster start' (and every process it started)."""
    from flott.cli.cluster_commands import stop_cluster

    sys.exit(stop_cluster(_load_config(config_file, dynamic)))


cli.add_command(run_application_command)
jobmanager.add_command(start_application_command)


def main() -> None:
    cli(prog_name="flott")


if __name__ == "__main__":
    main()
