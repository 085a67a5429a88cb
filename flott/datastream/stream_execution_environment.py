"""StreamExecutionEnvironment (PyFlink's ``pyflink.datastream.stream_execution_environment``).

The environment is where a program starts: it creates sources, holds the job's
settings, records the operators the DataStream calls create and, on
``execute()``, turns them into a JobGraph (``flott.graph``) for the pipeline
executor (embedded MiniCluster, remote cluster, or ``flott info``'s plan capture).

All settings live in one ``dict[str, str]`` under Flink's configuration keys
(as in Flink 2.x), seeded from the launcher's context configuration (``flott
run -p/-D``) and the ``configuration`` given to ``get_execution_environment``;
that dict becomes ``JobGraph.config``, so the runtime reads what the program set.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from flott.api.common.slot_sharing_group import SlotSharingGroup
from flott.api.execution import get_context_configuration, get_pipeline_executor
from flott.api.streaming.transformations import SourceTransformation, Transformation
from flott.common import ExecutionConfig
from flott.common.configuration import parse_config_value
from flott.common.type_conversion import convert_collection
from flott.configuration import Configuration
from flott.datastream.checkpoint_config import MODE, CheckpointConfig
from flott.datastream.checkpointing_mode import CheckpointingMode
from flott.datastream.connectors.base import get_produced_type, get_source_max_parallelism
from flott.datastream.connectors.collection import CollectionSource
from flott.datastream.connectors.source_function import source_from_source_function
from flott.datastream.data_stream import DataStream, not_yet
from flott.datastream.execution_mode import RuntimeExecutionMode
from flott.graph.cached_data_stream import drop_caches, mark_cached
from flott.graph.job_graph_generator import create_job_graph
from flott.graph.stream_graph import StreamGraph, default_max_parallelism
from flott.graph.stream_graph_generator import generate_stream_graph

if TYPE_CHECKING:
    from flott.common import ExecutionConfig
    from flott.runtime.jobgraph import JobGraph

PARALLELISM_DEFAULT = "parallelism.default"
MAX_PARALLELISM = "pipeline.max-parallelism"
AUTO_WATERMARK_INTERVAL = "pipeline.auto-watermark-interval"
OBJECT_REUSE = "pipeline.object-reuse"
AUTO_GENERATE_UIDS = "pipeline.auto-generate-uids"
GLOBAL_JOB_PARAMETERS = "pipeline.global-job-parameters"
RUNTIME_MODE = "execution.runtime-mode"
BUFFER_TIMEOUT = "execution.buffer-timeout"
PIPELINE_NAME = "pipeline.name"
OPERATOR_CHAINING = "pipeline.operator-chaining.enabled"
CHAIN_DIFFERENT_MAX_PARALLELISM = "pipeline.operator-chaining.chain-operators-with-different-max-parallelism"
CHANGELOG_ENABLED = "state.changelog.enabled"
DEFAULT_SAVEPOINT_DIR = "execution.checkpointing.savepoint-dir"
PYTHON_FILES = "python.files"
PYTHON_ARCHIVES = "python.archives"
PYTHON_EXECUTABLE = "python.executable"
PYTHON_REQUIREMENTS = "python.requirements"
CACHED_FILES = "pipeline.cached-files"
TIME_CHARACTERISTIC = "pipeline.time-characteristic"

DEFAULT_BUFFER_TIMEOUT_MS = 100
DEFAULT_JOB_NAME = "Flink Streaming Job"


def _configuration_dict(configuration: Any) -> dict[str, str]:
    """Keys and values of a PyFlink-style Configuration, a flott Configuration or a mapping."""
    if configuration is None:
        return {}
    if hasattr(configuration, "to_dict"):
        items = configuration.to_dict().items()
    elif isinstance(configuration, Mapping):
        items = configuration.items()
    else:
        raise TypeError(f"expected a Configuration or a dict, got {type(configuration).__name__}")
    return {str(k): str(v) for k, v in items}


def _context_configuration() -> dict[str, str]:
    """What the launcher (``flott run``/``flott info``) wants every environment to start from."""
    return dict(get_context_configuration())


def configured_millis(key: str, raw: str) -> int:
    """Milliseconds of a configured duration: plain ms (``-1`` allowed) or Flink text (``100 ms``)."""
    try:
        return int(raw.strip())
    except ValueError:

        return round(Configuration({key: raw}).get_seconds(key) * 1000)


def _parse_map_option(text: str) -> dict[str, str]:
    """Flink's map option text ``k1:v1,k2:v2``."""
    out: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = item.partition(":")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out


def _append_list_option(config: dict[str, str], key: str, value: str) -> None:
    existing = config.get(key)
    config[key] = f"{existing},{value}" if existing else value


class StreamExecutionEnvironment:
    """The context a streaming program runs in; create it with :meth:`get_execution_environment`."""

    def __init__(self, configuration: Any = None) -> None:

        self._config: dict[str, str] = {}
        self._execution_config = ExecutionConfig()
        self.configure(_context_configuration())
        self.configure(configuration)
        self._transformations: list[Transformation] = []
        self._default_local_parallelism = os.cpu_count() or 1
        self._state_backend: Any = None
        self._restart_strategy: Any = None
        self._slot_sharing_groups: dict[str, SlotSharingGroup] = {}
        self._uid_warning_given = False

    @staticmethod
    def get_execution_environment(configuration: Any = None) -> StreamExecutionEnvironment:
        """A new environment. Without explicit parallelism, jobs run with ``parallelism.default``
        of the configuration (or of ``flott run -p``), else one subtask per CPU core, as a
        local PyFlink environment does."""
        return StreamExecutionEnvironment(configuration)

    # --- configuration --------------------------------------------------------------------------

    @property
    def configuration(self) -> dict[str, str]:
        """The job's settings under Flink keys, as they go into ``JobGraph.config`` (flott-specific)."""
        merged = dict(self._config)
        merged.update(self._execution_config.to_dict())
        return merged

    def configure(self, configuration: Any) -> None:
        """Apply settings (Flink keys) on top of the current ones; ExecutionConfig keys
        (parallelism, max parallelism, ...) update :meth:`get_config`."""
        values = _configuration_dict(configuration)
        ec = self._execution_config
        for key, value in values.items():
            if key == PARALLELISM_DEFAULT:
                ec.set_parallelism(parse_config_value(key, value, int))
            elif key == MAX_PARALLELISM:
                ec.set_max_parallelism(parse_config_value(key, value, int))
            elif key == AUTO_WATERMARK_INTERVAL:
                ec.set_auto_watermark_interval(configured_millis(key, value))
            elif key == OBJECT_REUSE:
                if value.strip().lower() == "true":
                    ec.enable_object_reuse()
                else:
                    ec.disable_object_reuse()
            elif key == AUTO_GENERATE_UIDS:
                if value.strip().lower() == "true":
                    ec.enable_auto_generated_uids()
                else:
                    ec.disable_auto_generated_uids()
            elif key == GLOBAL_JOB_PARAMETERS:
                ec.set_global_job_parameters(_parse_map_option(value))
            else:
                self._config[key] = value

    def get_config(self) -> ExecutionConfig:
        """The ExecutionConfig (parallelism, global job parameters, ...); changes apply to the job."""
        return self._execution_config

    def set_parallelism(self, parallelism: int) -> StreamExecutionEnvironment:
        """Default parallelism of operators created after this call."""
        if not isinstance(parallelism, int) or parallelism < 1:
            raise ValueError("The parallelism must be at least one.")
        self._execution_config.set_parallelism(parallelism)
        return self

    def get_parallelism(self) -> int:
        parallelism = self._execution_config.get_parallelism()
        return parallelism if parallelism > 0 else self._default_local_parallelism

    def set_default_local_parallelism(self, parallelism: int) -> None:
        """Parallelism used when neither the program nor the configuration sets one."""
        if parallelism < 1:
            raise ValueError("The parallelism must be at least one.")
        self._default_local_parallelism = parallelism

    def get_default_local_parallelism(self) -> int:
        return self._default_local_parallelism

    def set_max_parallelism(self, max_parallelism: int) -> StreamExecutionEnvironment:
        """Upper bound of rescaling = number of key groups (default 128, Flink's rule)."""
        if not isinstance(max_parallelism, int) or not 0 < max_parallelism <= 32768:
            raise ValueError("maxParallelism is out of bounds 0 < maxParallelism <= 32768.")
        self._execution_config.set_max_parallelism(max_parallelism)
        return self

    def get_max_parallelism(self) -> int:
        """The configured max parallelism, else Flink's default for the default parallelism (128
        up to parallelism 85)."""
        configured = self._execution_config.get_max_parallelism()
        return configured if configured > 0 else default_max_parallelism(self.get_parallelism())

    def set_runtime_mode(self, execution_mode: RuntimeExecutionMode) -> StreamExecutionEnvironment:
        if not isinstance(execution_mode, RuntimeExecutionMode):
            raise TypeError("execution_mode must be a RuntimeExecutionMode")
        self._config[RUNTIME_MODE] = execution_mode.name
        return self

    def get_runtime_mode(self) -> RuntimeExecutionMode:
        return RuntimeExecutionMode[self._config.get(RUNTIME_MODE, "STREAMING").upper()]

    def set_buffer_timeout(self, timeout_millis: int) -> StreamExecutionEnvironment:
        """Max ms records wait in a network buffer before it is sent (-1: only when full)."""
        if timeout_millis < -1:
            raise ValueError("Timeout of buffer must be non-negative or -1")
        self._config[BUFFER_TIMEOUT] = str(int(timeout_millis))
        return self

    def get_buffer_timeout(self) -> int:
        raw = self._config.get(BUFFER_TIMEOUT)
        return DEFAULT_BUFFER_TIMEOUT_MS if raw is None else configured_millis(BUFFER_TIMEOUT, raw)

    def disable_operator_chaining(self) -> StreamExecutionEnvironment:
        self._config[OPERATOR_CHAINING] = "false"
        return self

    def is_chaining_enabled(self) -> bool:
        return self._config.get(OPERATOR_CHAINING, "true").lower() == "true"

    def is_chaining_of_operators_with_different_max_parallelism_enabled(self) -> bool:
        return self._config.get(CHAIN_DIFFERENT_MAX_PARALLELISM, "true").lower() == "true"

    def register_slot_sharing_group(self, slot_sharing_group: SlotSharingGroup) -> StreamExecutionEnvironment:
        """Declare a group's resource profile; operators refer to it by name."""
        self._slot_sharing_groups[slot_sharing_group.get_name()] = slot_sharing_group
        return self

    def set_stream_time_characteristic(self, characteristic: Any) -> None:
        """PyFlink 1.x setting, with Flink 1.12+'s effect: event time is always available, and
        ``ProcessingTime`` only switches periodic watermarks off (interval 0), while
        ``EventTime``/``IngestionTime`` switch them back on (200 ms) if they were off."""
        name = getattr(characteristic, "name", str(characteristic))
        if name not in ("ProcessingTime", "IngestionTime", "EventTime"):
            raise ValueError(f"unknown time characteristic {characteristic!r}")
        self._config[TIME_CHARACTERISTIC] = name
        ec = self._execution_config
        if name == "ProcessingTime":
            ec.set_auto_watermark_interval(0)
        elif ec.get_auto_watermark_interval() == 0:
            ec.set_auto_watermark_interval(200)

    def get_stream_time_characteristic(self) -> Any:
        return self._config.get(TIME_CHARACTERISTIC, "EventTime")

    # --- checkpointing, state, restarts ----------------------------------------------------------

    def enable_checkpointing(
        self, interval: int, mode: CheckpointingMode | None = None
    ) -> StreamExecutionEnvironment:
        """Checkpoint every ``interval`` ms (``execution.checkpointing.interval``): aligned barriers,
        exactly-once state, transactional file sinks. Checkpoints go to the checkpoint storage
        directory (``execution.checkpointing.dir``; a local temporary directory if unset)."""
        config = self.get_checkpoint_config()
        config.set_checkpoint_interval(interval)
        if mode is not None:
            config.set_checkpointing_mode(mode)
        return self

    def get_checkpoint_config(self) -> CheckpointConfig:
        return CheckpointConfig(self._config)

    def get_checkpoint_interval(self) -> int:
        return self.get_checkpoint_config().get_checkpoint_interval()

    def get_checkpointing_mode(self) -> CheckpointingMode:
        return CheckpointingMode[self._config.get(MODE, CheckpointingMode.EXACTLY_ONCE.name)]

    get_checkpointing_consistency_mode = get_checkpointing_mode

    def is_unaligned_checkpoints_enabled(self) -> bool:
        return self.get_checkpoint_config().is_unaligned_checkpoints_enabled()

    def is_force_unaligned_checkpoints(self) -> bool:
        return self.get_checkpoint_config().is_force_unaligned_checkpoints()

    def set_state_backend(self, state_backend: Any) -> StreamExecutionEnvironment:
        """Stores ``state.backend.type`` and the backend's options (PyFlink 1.x API): keyed state
        lives on the heap (``HashMapStateBackend``) or in RocksDB (``EmbeddedRocksDBStateBackend``).
        Options flott does not offer (incremental checkpoints, predefined options) are refused
        when the job is planned."""
        from flott.datastream.state_backend import StateBackend

        if not isinstance(state_backend, StateBackend):
            raise TypeError(f"expected a StateBackend, got {type(state_backend).__name__}")
        self._config.update(state_backend.to_configuration())
        self._state_backend = state_backend
        return self

    def get_state_backend(self) -> Any:
        if self._state_backend is not None:
            return self._state_backend
        from flott.datastream.state_backend import state_backend_from_configuration

        return state_backend_from_configuration(self._config)

    def enable_changelog_state_backend(self, enabled: bool) -> StreamExecutionEnvironment:
        """flott has no changelog state backend: enabling it is refused when the job is planned."""
        self._config[CHANGELOG_ENABLED] = "true" if enabled else "false"
        return self

    def is_changelog_state_backend_enabled(self) -> bool | None:
        raw = self._config.get(CHANGELOG_ENABLED)
        return None if raw is None else raw.lower() == "true"

    def set_default_savepoint_directory(self, directory: str) -> StreamExecutionEnvironment:
        self._config[DEFAULT_SAVEPOINT_DIR] = directory
        return self

    def get_default_savepoint_directory(self) -> str | None:
        return self._config.get(DEFAULT_SAVEPOINT_DIR)

    def set_restart_strategy(self, restart_strategy_configuration: Any) -> None:
        """Stores ``restart-strategy.*`` keys (PyFlink 1.x API); the JobMaster applies them."""
        to_config = getattr(restart_strategy_configuration, "to_config_dict", None)
        if not callable(to_config):
            raise TypeError(
                "expected a RestartStrategies configuration (e.g. RestartStrategies.no_restart())"
            )
        for key in [k for k in self._config if k.startswith("restart-strategy.")]:
            del self._config[key]
        self._config.update({str(k): str(v) for k, v in to_config().items()})
        self._restart_strategy = restart_strategy_configuration

    def get_restart_strategy(self) -> Any:
        return self._restart_strategy

    # --- Python dependencies (recorded under PyFlink's keys for the client to ship) ---------------

    def add_python_file(self, file_path: str) -> None:
        _append_list_option(self._config, PYTHON_FILES, file_path)

    def add_python_archive(self, archive_path: str, target_dir: str | None = None) -> None:
        _append_list_option(
            self._config, PYTHON_ARCHIVES, f"{archive_path}#{target_dir}" if target_dir else archive_path
        )

    def set_python_executable(self, python_exec: str) -> None:
        self._config[PYTHON_EXECUTABLE] = python_exec

    def set_python_requirements(
        self, requirements_file_path: str, requirements_cache_dir: str | None = None
    ) -> None:
        value = requirements_file_path
        if requirements_cache_dir is not None:
            value += f"#{requirements_cache_dir}"
        self._config[PYTHON_REQUIREMENTS] = value

    def register_cached_file(self, file_path: str, name: str, executable: bool = False) -> None:
        _append_list_option(
            self._config, CACHED_FILES, f"name:{name},path:{file_path},executable:{str(executable).lower()}"
        )

    def add_jars(self, *jars_path: str) -> None:
        """flott has no JVM: jars cannot be used; warned and ignored so programs keep running."""
        warnings.warn("flott has no JVM: add_jars() is ignored", stacklevel=2)

    def add_classpaths(self, *classpaths: str) -> None:
        warnings.warn("flott has no JVM: add_classpaths() is ignored", stacklevel=2)

    # --- sources --------------------------------------------------------------------------------

    def _source(
        self,
        source: Any,
        name: str,
        type_info: Any,
        watermark_strategy: Any = None,
        non_parallel: bool = False,
    ) -> DataStream:
        t = SourceTransformation(
            name=name,
            parallelism=1 if non_parallel else self.get_parallelism(),
            parallelism_configured=non_parallel,
            output_type=type_info,
            source=source,
            watermark_strategy=watermark_strategy,
            non_parallel=non_parallel,
        )
        return DataStream(t, self)

    def from_source(
        self, source: Any, watermark_strategy: Any, source_name: str, type_info: Any = None
    ) -> DataStream:
        """Read a Source (FileSource, NumberSequenceSource, ...); the vertex is ``Source: <name>``.

        Without ``type_info`` the source's own produced type (if it declares one) is used, as
        PyFlink takes it from the Java source. With a WatermarkStrategy that has a timestamp
        assigner, records get timestamps and each source subtask generates watermarks."""
        if not callable(getattr(source, "create_reader", None)) or not callable(
            getattr(source, "get_boundedness", None)
        ):
            raise TypeError(f"from_source() needs a Source, got {type(source).__name__}")
        if type_info is None:
            type_info = get_produced_type(source)
        non_parallel = get_source_max_parallelism(source) == 1
        return self._source(source, source_name, type_info, watermark_strategy, non_parallel=non_parallel)

    def from_collection(self, collection: list[Any], type_info: Any = None) -> DataStream:
        """A non-parallel (parallelism 1) source of the given elements, named ``Collection Source``
        as PyFlink's.

        With ``type_info`` the elements are converted here to what PyFlink's functions receive
        after its trip through Java (tuples to Rows for ``Types.ROW``, float32 for ``FLOAT``,
        ...; see :mod:`flott.common.type_conversion`), and an element that does not fit the type
        is refused now, where PyFlink fails too."""
        elements = convert_collection(list(collection), type_info)
        return self._source(
            CollectionSource(elements, type_info), "Collection Source", type_info, non_parallel=True
        )

    def read_text_file(self, file_path: str, charset_name: str = "UTF-8") -> DataStream:
        """The lines of a file (or of the files under a directory) as strings (PyFlink 1.x API)."""
        # deferred: the file connector (reader, formats, sink), ~40 ms of `import flott.datastream`
        from flott.datastream.connectors.file_system import FileSource, StreamFormat

        source = (
            FileSource.for_record_stream_format(StreamFormat.text_line_format(charset_name), file_path)
            .process_static_file_set()
            .build()
        )
        return self._source(source, "Custom File Source", get_produced_type(source))

    def add_source(
        self, source_func: Any, source_name: str = "Custom Source", type_info: Any = None
    ) -> DataStream:
        """A SourceFunction (``run(ctx)``/``cancel()``), adapted onto the Source contract; non-parallel
        unless it is a ParallelSourceFunction, as in Flink."""
        source, non_parallel = source_from_source_function(source_func)
        return self._source(source, source_name, type_info, non_parallel=non_parallel)

    def create_input(self, input_format: Any, type_info: Any = None) -> DataStream:
        raise not_yet("InputFormat sources", "StreamExecutionEnvironment.create_input")

    # --- the job --------------------------------------------------------------------------------

    def _add_operator(self, transformation: Transformation) -> None:
        """Register an operator transformation (sources are reached through their consumers)."""
        self._transformations.append(transformation)

    @property
    def transformations(self) -> list[Transformation]:
        """The recorded operator transformations, in creation order (flott-specific)."""
        return list(self._transformations)

    def _job_name(self, job_name: str | None) -> str:
        return job_name if job_name is not None else self._config.get(PIPELINE_NAME, DEFAULT_JOB_NAME)

    def get_stream_graph(
        self, job_name: str | None = None, clear_transformations: bool = False
    ) -> StreamGraph:
        """The StreamGraph of the recorded program (flott-specific, as Flink's getStreamGraph)."""
        graph = generate_stream_graph(self, self._job_name(job_name))
        if clear_transformations:
            self._transformations.clear()
        return graph

    def get_job_graph(self, job_name: str | None = None) -> JobGraph:
        """The JobGraph ``execute(job_name)`` would submit (transformations are kept)."""
        return create_job_graph(self.get_stream_graph(job_name))

    def get_execution_plan(self) -> str:
        """The StreamGraph as JSON, in the shape of Flink's execution plan."""
        return self.get_stream_graph().to_execution_plan_json()

    def execute(self, job_name: str | None = None) -> Any:
        """Build the job, submit it and wait for it; returns the JobExecutionResult.

        Raises JobExecutionError if the job fails. The recorded transformations are
        cleared before submission (as Flink does), so a second ``execute`` needs new ones.
        """
        graph = self.get_stream_graph(job_name, clear_transformations=True)
        result = self._submit(graph).get_job_execution_result().result()
        mark_cached(self, graph.cache_writes)  # as Flink: only a successful execute() caches
        return result

    def execute_async(self, job_name: str | None = "Flink Streaming Job") -> Any:
        """Build the job and submit it; returns a JobClient without waiting."""
        return self._submit(self.get_stream_graph(job_name, clear_transformations=True))

    def _submit(self, graph: StreamGraph) -> Any:
        return get_pipeline_executor(self.configuration).execute(create_job_graph(graph))

    def close(self) -> None:
        """Drop recorded transformations and the results of ``cache()``."""
        self._transformations.clear()
        drop_caches(self)

    def __enter__(self) -> StreamExecutionEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
