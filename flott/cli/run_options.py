"""``flott run``'s flags, with the names and meanings of Flink's ``flink run``.

Parsing follows Flink's CLI (commons-cli with ``stopAtNonOption``): flags are read up to the
first token that is not one of them; that token and everything after it belong to the
program (``flott run -py job.py --input x -p 2`` hands ``--input x -p 2`` to the program,
as ``flink run`` does once it meets ``--input``). Before the program is named, an unknown
flag is an error, never a program argument.

The program is ``-py FILE``, ``-pym MODULE``, ``-c MODULE`` (Flink's ``--class``: the entry
point; a following archive or directory is put on the path, as ``flink run -c Main app.jar``
puts the jar on the classpath) or, flott's shorthand, a positional ``.py`` file.

Flags flott cannot honour are refused with the reason (``-pyarch``, ``-pyexec``,
``-pyclientexec``, ``-pypath``, ``-C``, ``-cm claim|legacy``, targets other than ``local`` and
``remote``), never accepted and ignored.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import click

from flott.cli.options import config_option, dynamic_option, jm_option, load_config, token_option

ARCHIVE_SUFFIXES = (".zip", ".whl", ".egg", ".pyz")


@dataclass(frozen=True)
class ProgramEntry:
    """What ``flott run`` runs: a script file or a module, with the program's arguments."""

    kind: str  # "script" | "module"
    target: str
    args: tuple[str, ...]


class FlinkStyleCommand(click.Command):
    """A click command that stops reading flags where Flink's CLI does (see the module doc)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        head, tail = split_program_args(self, args)
        return super().parse_args(ctx, [*head, "--", *tail] if tail else head)


_ENTRY_FLAGS = ("-py", "--python", "-pym", "--pyModule", "-c", "--class")


def split_program_args(command: click.Command, args: list[str]) -> tuple[list[str], list[str]]:
    """``args`` split into flott's flags and the program's part (its first token on)."""
    takes_value: dict[str, bool] = {}
    for param in command.params:
        if isinstance(param, click.Option):
            for name in (*param.opts, *param.secondary_opts):
                takes_value[name] = not (param.is_flag or param.count)
    head: list[str] = []
    entry_named = False
    i = 0
    while i < len(args):
        token = args[i]
        name = token.split("=", 1)[0] if token.startswith("--") else token
        if token == "--":
            return head, args[i + 1 :]
        if name in takes_value:
            width = 2 if takes_value[name] and name == token else 1
            head += args[i : i + width]
            entry_named = entry_named or name in _ENTRY_FLAGS
            i += width
            continue
        if token.startswith("-") and len(token) > 2 and takes_value.get(token[:2]):
            head.append(token)  # an attached value: -Dkey=value, -p2
            i += 1
            continue
        if token.startswith("-") and len(token) > 1 and not entry_named:
            return [*head, token], args[i + 1 :]  # click names the unknown flag
        return head, args[i:]
    return head, []


def _refuse(flag: str, why: str) -> click.UsageError:
    return click.UsageError(f"{flag} is not supported by flott: {why}")


def program_entry(
    python: str | None, py_module: str | None, entry_class: str | None, args: tuple[str, ...]
) -> tuple[ProgramEntry, str | None]:
    """The program to run, and an archive/directory to put on the path (``-c NAME ARCHIVE``)."""
    named = [f for f, v in (("-py", python), ("-pym", py_module), ("-c", entry_class)) if v]
    if len(named) > 1:
        raise click.UsageError(f"{' and '.join(named)} both name the program's entry point: give one")
    if python:
        return ProgramEntry("script", python, args), None
    if py_module or entry_class:
        module = str(py_module or entry_class)
        if entry_class and args and (args[0].endswith(ARCHIVE_SUFFIXES) or Path(args[0]).is_dir()):
            return ProgramEntry("module", module, args[1:]), args[0]
        return ProgramEntry("module", module, args), None
    if not args:
        raise click.UsageError("no program given: flott run -py job.py [ARGS] (or -pym MODULE, or job.py)")
    return ProgramEntry("script", args[0], args[1:]), None


def resolve_target(target: str | None, jobmanager: str | None, configured: str) -> str:
    """``local`` (an embedded cluster) or ``remote`` (the session cluster at -m / rest.address)."""
    chosen = (target or configured or ("remote" if jobmanager else "local")).strip().lower()
    if chosen not in ("local", "remote"):
        raise click.UsageError(
            f"-t {chosen}: flott run supports the targets 'local' (an embedded cluster) and "
            f"'remote' (a session cluster at -m or rest.address:rest.port); for a cluster of the "
            f"job's own use 'flott run-application'"
        )
    if chosen == "local" and jobmanager:
        raise click.UsageError(f"-m {jobmanager} names a cluster, but the target is 'local': drop one")
    return chosen


@click.command(name="run", cls=FlinkStyleCommand, context_settings={"allow_interspersed_args": False})
@click.option("-py", "--python", "python", default=None, metavar="FILE", help="Python script of the program.")
@click.option(
    "-pym", "--pyModule", "py_module", default=None, metavar="MODULE", help="Python module of the program."
)
@click.option(
    "-c",
    "--class",
    "entry_class",
    default=None,
    metavar="MODULE",
    help="The program's entry point, a module (as -pym); an archive or directory given after it "
    "goes on the path, as 'flink run -c Main app.jar' puts the jar on the classpath.",
)
@click.option("-p", "--parallelism", type=int, default=None, help="Default parallelism of the job.")
@click.option("-d", "--detached", is_flag=True, help="Submit and return without waiting for the job.")
@jm_option
@token_option
@click.option(
    "-t",
    "--target",
    "target",
    default=None,
    metavar="TARGET",
    help="'local' (an embedded cluster; the default without -m) or 'remote' (execution.target).",
)
@click.option("-e", "--executor", "executor", default=None, hidden=True, help="Deprecated: -t.")
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
    "-cm",
    "--claimMode",
    "claim_mode",
    default=None,
    metavar="MODE",
    help="How the savepoint is restored: only 'no_claim' (flott never deletes or reuses its files).",
)
@click.option("-rm", "--restoreMode", "restore_mode", default=None, hidden=True, help="Deprecated: -cm.")
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
@click.option(
    "-pyarch",
    "--pyArchives",
    "py_archives",
    default=None,
    help="Refused: flott cannot ship archives to the TaskExecutors' working directory.",
)
@click.option(
    "-pyexec",
    "--pyExecutable",
    "py_executable",
    default=None,
    help="Refused: functions run in the TaskExecutor's interpreter.",
)
@click.option(
    "-pyclientexec",
    "--pyClientExecutable",
    "py_client_executable",
    default=None,
    help="Refused: the program runs in flott's interpreter.",
)
@click.option(
    "-pypath",
    "--pyPythonPath",
    "py_python_path",
    default=None,
    help="Refused: TaskExecutors use their own installation.",
)
@click.option("-C", "--classpath", "classpath", default=None, help="Refused: flott has no JVM.")
@click.option(
    "-sae",
    "--shutdownOnAttachedExit",
    "shutdown_on_attached_exit",
    is_flag=True,
    help="Only with -t local, where it is what happens anyway: the embedded cluster ends with flott run.",
)
@config_option
@dynamic_option
@click.option("-v", "--verbose", count=True, help="Tracebacks and runtime log lines on the console.")
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="[SCRIPT] [ARGS]...")
def run_command(
    python: str | None,
    py_module: str | None,
    entry_class: str | None,
    parallelism: int | None,
    detached: bool,
    jobmanager: str | None,
    token: str | None,
    target: str | None,
    executor: str | None,
    savepoint: str | None,
    allow_non_restored_state: bool,
    claim_mode: str | None,
    restore_mode: str | None,
    py_files: str | None,
    py_requirements: str | None,
    py_archives: str | None,
    py_executable: str | None,
    py_client_executable: str | None,
    py_python_path: str | None,
    classpath: str | None,
    shutdown_on_attached_exit: bool,
    conf_dir: str | None,
    dynamic: tuple[str, ...],
    verbose: int,
    args: tuple[str, ...],
) -> None:
    """Run a PyFlink-style program: embedded (-t local, the default), or on the cluster at -m.

    \b
      flott run -py job.py [ARGS]       a script (also: flott run job.py [ARGS])
      flott run -pym pkg.job [ARGS]     a module (-pyfs ships the files it needs)
    """
    from flott.cli.run_command import run_entry

    root = click.get_current_context().find_root()
    if isinstance(root.obj, dict):
        root.obj["verbose"] = int(root.obj.get("verbose", 0)) + verbose
    refusals = (
        (
            py_archives,
            "-pyarch",
            "archives are extracted into the Python worker's working directory "
            "in Flink; a flott TaskExecutor runs every job's functions in one process with one working "
            "directory. Ship Python code with -pyfs, data through a path every TaskExecutor can read",
        ),
        (
            py_executable,
            "-pyexec",
            "the job's functions run in the TaskExecutor's own interpreter; "
            "start the cluster's processes with the Python you want",
        ),
        (
            py_client_executable,
            "-pyclientexec",
            "the program runs in the interpreter running flott; use 'that/python -m flott.cli.main run ...'",
        ),
        (
            py_python_path,
            "-pypath",
            "the TaskExecutors use their own interpreter's installation; ship code with -pyfs or -pyreq",
        ),
        (classpath, "-C", "flott has no JVM: there is no classpath"),
    )
    for value, flag, why in refusals:
        if value:
            raise _refuse(flag, why)
    mode = (claim_mode or restore_mode or "").strip().lower()
    if mode and mode != "no_claim":
        raise _refuse(f"-cm {mode}", "flott restores a savepoint without claiming it (no_claim)")
    entry, archive = program_entry(python, py_module, entry_class, args)
    if archive is not None:
        py_files = f"{py_files},{archive}" if py_files else archive
    config = load_config(
        conf_dir,
        dynamic,
        "client",
        False,
        overrides={
            "parallelism.default": str(parallelism) if parallelism else None,
            "execution.savepoint.path": savepoint,
            "execution.savepoint.ignore-unclaimed-state": "true" if allow_non_restored_state else None,
            "python.files": py_files,
            "python.requirements": py_requirements,
        },
    )
    chosen = resolve_target(target or executor, jobmanager, config.get("execution.target", ""))
    if chosen == "remote" and shutdown_on_attached_exit:
        raise _refuse("-sae", "flott run does not start the remote cluster, so it does not shut it down")
    if chosen == "local" and detached:
        raise click.UsageError(
            "-d needs a cluster that outlives flott run: the embedded cluster (-t local) ends with "
            "it; submit with -m HOST:PORT (or -t remote)"
        )
    if chosen == "remote" and jobmanager is None:
        jobmanager = f"{config.get('rest.address')}:{config.get('rest.port')}"
    sys.exit(run_entry(entry, config, detached, jobmanager if chosen == "remote" else None, token))
