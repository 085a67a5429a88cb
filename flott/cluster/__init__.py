"""The composition root: the JobManager processes that wire runtime, REST and HA together.

Flink's ``ClusterEntrypoint`` family (``StandaloneSessionClusterEntrypoint``, the application
cluster entrypoint) lives here, on the top floor, above ``flott.runtime``, ``flott.rest`` and
``flott.client``: each entrypoint starts the RPC service, ResourceManager, BlobServer, Dispatcher
and the REST endpoint and connects them. Nothing below imports this package; ``flott.cli`` starts
it (``flott jobmanager start``, ``flott jobmanager start-application``).

- ``session_cluster``: a session JobManager (``high-availability.type: none``);
- ``ha_session_cluster``: a session JobManager under ZooKeeper leader election;
- ``application_cluster``: a cluster for one program (Flink's application mode).

The process-level pieces every JobManager and TaskExecutor shares (event loop, logging, log files,
thread dumps, termination signals) stay in ``flott.runtime.entrypoint``, below the runtime's
components that use them.
"""
