"""The RPC gateways of the runtime's components (Flink's DispatcherGateway, JobMasterGateway,
ResourceManagerGateway, TaskExecutorGateway): what one component may ask of another.

They live on a floor of their own, below the components, because every component talks to the
others: with each gateway in its component's package, the JobMaster, ResourceManager and
TaskExecutor packages imported one another in a loop. A gateway module holds only the protocol
and its endpoint name; the wire types it carries are in ``flott.runtime.messages``.
"""
