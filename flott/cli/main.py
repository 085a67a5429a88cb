"""The ``flott`` command line (Flink's ``bin/flink`` and cluster scripts)."""

from __future__ import annotations

import logging
import sys

import click

from flott.configuration import Configuration
from flott.errors import ConfigurationError


def _load_config(config_file: str | None, dynamic: tuple[str, ...], **overrides: str | None) -> Configuration:
    try:
        values = Configuration.parse_dynamic(dynamic)
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
@click.option("-s", "--fromSavepoint", "savepoint", default=None, help="Savepoint to restore from.")
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


@cli.command()
@_jm_option
@_config_option
@_dynamic_option
@click.option("-s", "--withSavepoint", "savepoint_dir", default=None, help="Cancel with a savepoint.")
@click.argument("job_id")
def cancel(
    jobmanager: str | None,
    config_file: str | None,
    dynamic: tuple[str, ...],
    savepoint_dir: str | None,
    job_id: str,
) -> None:
    """Cancel the job JOB_ID."""
    from flott.cli.job_commands import cancel_job

    if savepoint_dir is not None:
        raise click.ClickException(
            "cancel with a savepoint comes with checkpoints and savepoints (not built yet)"
        )
    sys.exit(cancel_job(_load_config(config_file, dynamic), jobmanager, job_id))


@cli.command()
@_jm_option
@click.option("-p", "--savepointPath", "savepoint_path", default=None)
@click.option("-d", "--drain", is_flag=True)
@click.argument("job_id")
def stop(jobmanager: str | None, savepoint_path: str | None, drain: bool, job_id: str) -> None:
    """Stop JOB_ID with a savepoint (comes with checkpoints and savepoints)."""
    raise click.ClickException("stop-with-savepoint comes with checkpoints and savepoints (not built yet)")


@cli.command()
@_jm_option
@click.option("-d", "--dispose", default=None)
@click.argument("job_id", required=False)
@click.argument("target_directory", required=False)
def savepoint(
    jobmanager: str | None, dispose: str | None, job_id: str | None, target_directory: str | None
) -> None:
    """Trigger or dispose a savepoint (comes with checkpoints and savepoints)."""
    raise click.ClickException("savepoints come with checkpoints and savepoints (not built yet)")


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

    passthrough = (["-c", config_file] if config_file else []) + [a for d in dynamic for a in ("-D", d)]
    sys.exit(start_cluster(_load_config(config_file, dynamic), taskmanagers, passthrough))


@cluster.command(name="stop")
@_config_option
@_dynamic_option
def cluster_stop(config_file: str | None, dynamic: tuple[str, ...]) -> None:
    """Stop the cluster started with 'flott cluster start' (and every process it started)."""
    from flott.cli.cluster_commands import stop_cluster

    sys.exit(stop_cluster(_load_config(config_file, dynamic)))


def main() -> None:
    cli(prog_name="flott")


if __name__ == "__main__":
    main()
