"""How a program's environment finds what runs its job (Flink's ``core.execution``).

Flink's ``StreamExecutionEnvironment`` never names an executor: it asks the
``PipelineExecutorServiceLoader`` for the factory whose name is the configured
``execution.target`` (``local``, ``remote``, ...), and the launcher (``flink run``) may
install a context environment first. flott keeps that shape so the user API, on its floor,
imports nothing from the client floor above it:

- :func:`use_executor` is the launcher's context (``flott run``, ``flott info``, the
  application runner, tests): inside it ``env.execute()`` uses that executor;
- otherwise :func:`get_pipeline_executor` looks ``execution.target`` (default ``local``) up in
  :data:`EXECUTOR_FACTORIES`, Flink's ``META-INF/services`` file as data: target name to
  ``module:factory``, imported on first use;
- :func:`set_context_configuration` is the launcher's ``-p/-D`` that environments created
  meanwhile start from.

A target without a factory is refused (ConfigurationError) rather than run somewhere else.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from flott.configuration import Configuration
from flott.errors import ConfigurationError

if TYPE_CHECKING:
    from flott.common.job_client import JobClient
    from flott.runtime.jobgraph import JobGraph

__all__ = [
    "EXECUTION_TARGET",
    "EXECUTOR_FACTORIES",
    "PipelineExecutor",
    "get_context_configuration",
    "get_pipeline_executor",
    "set_context_configuration",
    "use_executor",
]

EXECUTION_TARGET = "execution.target"

EXECUTOR_FACTORIES: dict[str, str] = {
    "local": "flott.client.pipeline_executor:EmbeddedExecutor",
    "remote": "flott.client.rest_cluster_client:RestExecutor",
}
"""``execution.target`` → ``module:factory``; the factory takes the job's Configuration."""


class PipelineExecutor(Protocol):
    def execute(self, job_graph: JobGraph) -> JobClient: ...


_global_override: list[PipelineExecutor] = []


@contextlib.contextmanager
def use_executor(executor: PipelineExecutor) -> Iterator[PipelineExecutor]:
    """Make ``env.execute()`` in this block use ``executor`` (the CLI's launchers)."""
    _global_override.append(executor)
    try:
        yield executor
    finally:
        _global_override.remove(executor)


_context_configuration: list[Configuration] = []


def set_context_configuration(config: Configuration | None) -> None:
    """The launcher's configuration (``flott run -p/-D``) that environments created now start from."""
    _context_configuration.clear()
    if config is not None:
        _context_configuration.append(config)


def get_context_configuration() -> dict[str, str]:
    return _context_configuration[0].to_dict() if _context_configuration else {}


def _as_configuration(configuration: Any) -> Configuration:
    if configuration is None:
        return Configuration()
    if isinstance(configuration, Configuration):
        return configuration
    if hasattr(configuration, "to_dict"):
        return Configuration({str(k): str(v) for k, v in configuration.to_dict().items()})
    if isinstance(configuration, Mapping):
        return Configuration({str(k): str(v) for k, v in configuration.items()})
    raise TypeError(f"expected a Configuration or a dict, got {type(configuration).__name__}")


def get_pipeline_executor(configuration: Any = None) -> PipelineExecutor:
    """The launcher's executor if one is installed, else the one ``execution.target`` names."""
    if _global_override:
        return _global_override[-1]
    config = _as_configuration(configuration)
    target = (config.get(EXECUTION_TARGET, "") or "local").strip().lower()
    address = EXECUTOR_FACTORIES.get(target)
    if address is None:
        raise ConfigurationError(
            f"{EXECUTION_TARGET}: {target!r} names no executor; flott has "
            + ", ".join(repr(name) for name in sorted(EXECUTOR_FACTORIES))
        )
    module_name, _, factory = address.partition(":")
    executor: PipelineExecutor = getattr(importlib.import_module(module_name), factory)(config)
    return executor
