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


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("-p", "--parallelism", type=int, default=None, help="Default parallelism of the job.")
@click.option("-d", "--detached", is_flag=True, help="Submit and return without waiting (remote clusters).")
@click.option(
    "-c",
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="A flott/Flink-style YAML config file.",
)
@click.option("-D", "dynamic", multiple=True, metavar="KEY=VALUE", help="Set a configuration key.")
@click.argument("script", type=click.Path())
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(
    parallelism: int | None,
    detached: bool,
    config_file: str | None,
    dynamic: tuple[str, ...],
    script: str,
    args: tuple[str, ...],
) -> None:
    """Run SCRIPT (a PyFlink-style program) on an embedded cluster; ARGS go to the script."""
    from flott.cli.run_command import run_script

    config = _load_config(
        config_file, dynamic, **{"parallelism.default": str(parallelism) if parallelism else None}
    )
    sys.exit(run_script(script, args, config, detached))


def main() -> None:
    cli(prog_name="flott")


if __name__ == "__main__":
    main()
