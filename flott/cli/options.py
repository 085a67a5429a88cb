"""What every ``flott`` command shares: where its configuration comes from, and its logging.

A command's configuration is the config file found as Flink finds ``config.yaml``
(``--configDir``, ``$FLOTT_CONF_DIR``, ``$FLINK_CONF_DIR``), then ``-D key=value``, then the
command's own flags; loading it also sends the process's log to its file
(:mod:`flott.runtime.entrypoint.runtime_logging`), the console getting warnings only
unless ``flott -v``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import click

from flott.configuration import Configuration, take_secrets_from_environment
from flott.errors import ConfigurationError


class ConfigurationUsageError(click.UsageError):
    """A bad configuration value: one line naming the key and the value (exit code 2), no usage
    text (the flags were fine, a value was not)."""

    def show(self, file: Any = None) -> None:
        click.echo(f"Error: {self.format_message()}", err=True)


def verbosity() -> int:
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    return int(obj.get("verbose", 0)) if isinstance(obj, dict) else 0


def load_config(
    conf_dir: str | None,
    dynamic: tuple[str, ...],
    process: str = "client",
    own_process: bool = False,
    overrides: Mapping[str, str | None] | None = None,
) -> Configuration:
    """The command's configuration (config file < ``-D`` < the command's own flags), and the
    process's logging set up from it (``process`` names the log file, as Flink's do)."""
    try:
        # Secrets handed over by a parent flott process come in the environment, never on the
        # command line (ps).
        values = {**Configuration.parse_dynamic(dynamic), **take_secrets_from_environment()}
        for key, value in (overrides or {}).items():
            if value is not None:
                values[key] = value
        config = Configuration.load_default(conf_dir, values)
    except ConfigurationError as e:
        raise ConfigurationUsageError(str(e)) from None
    # deferred: logging set-up (getpass, termios), ~2 ms that `flott --version` and `--help` skip
    from flott.runtime.entrypoint.runtime_logging import configure_logging

    verbose = verbosity()
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    configure_logging(config, process, own_process=own_process, console_level=level)
    return config


config_option = click.option(
    "--configDir",
    "conf_dir",
    type=click.Path(),
    default=None,
    metavar="DIR",
    help="Directory holding config.yaml (default: $FLOTT_CONF_DIR, else $FLINK_CONF_DIR).",
)
dynamic_option = click.option(
    "-D", "dynamic", multiple=True, metavar="KEY=VALUE", help="Set a configuration key."
)
jm_option = click.option(
    "-m",
    "--jobmanager",
    default=None,
    metavar="HOST:PORT",
    help="REST address of the cluster (default: rest.address:rest.port).",
)
token_option = click.option(
    "--token",
    default=None,
    metavar="TOKEN",
    help="Bearer token for a cluster with REST authentication (default: $FLOTT_REST_TOKEN, else "
    "flott.rest.client.token). Prefer the variable: a command line is visible to every user (ps).",
)
