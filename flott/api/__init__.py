"""The ground floor: contracts that the user API, the graph translation and the runtime all need.

Flink keeps these in ``flink-core`` and the bottom of ``flink-streaming-java``, below both the
DataStream API and the runtime; flott does the same, with Flink's package names:

- ``flott.api.common.functions``: ``Function``, ``RuntimeContext``, Map/FlatMap/Filter/Reduce/
  Aggregate functions, ``KeySelector``, ``Partitioner`` (Flink's ``api.common.functions``);
- ``flott.api.common.state``: state interfaces, descriptors, ``StateTtlConfig``
  (Flink's ``api.common.state``);
- ``flott.api.common.output_tag``: ``OutputTag`` (Flink's ``util.OutputTag``);
- ``flott.api.common.durations``: the duration shapes PyFlink programs pass, in milliseconds;
- ``flott.api.common.slot_sharing_group``: ``SlotSharingGroup``, ``MemorySize``
  (Flink's ``api.common.operators``);
- ``flott.api.connector``: ``Boundedness`` (Flink's ``api.connector.source``);
- ``flott.api.execution``: how an environment finds its executor by ``execution.target``
  (Flink's ``core.execution.PipelineExecutorServiceLoader``);
- ``flott.api.streaming.transformations``: what a DataStream call records, what the graph
  translation reads (Flink's ``streaming.api.transformations``);
- ``flott.api.streaming.functions``: process, co-process, window, broadcast and async functions
  (Flink's ``streaming.api.functions``), ``flott.api.streaming.async_retry`` their retry
  strategies;
- ``flott.api.streaming.time_domain``, ``timer_service`` (Flink's ``streaming.api``);
- ``flott.api.streaming.windowing``: windows, assigners, triggers
  (Flink's ``streaming.api.windowing``).

The floor imports nothing above it (only ``flott.common``'s types, ``flott.configuration`` and
``flott.errors``; ``tests/structure`` checks it).
``flott.datastream`` re-exports every name here under PyFlink's import paths
(``pyflink.datastream.functions``, ``.state``, ``.window``, ``.output_tag``, ...), so programs
never import ``flott.api``; the runtime and the graph translation import from here, never from
``flott.datastream``.
"""
