"""Collecting a job's results to the client (Flink's ``streaming.api.operators.collect``).

``DataStream.execute_and_collect()`` appends a :class:`~.sink.CollectSink`
(parallelism 1, named ``Data stream collect sink``) and polls it:

    client ──REST POST /jobs/:id/coordinators/:op──► Dispatcher ──► JobMaster
    (CollectResultFetcher)                          (coordinator: forwards opaque
                                                     bytes to the sink's TaskExecutor)
                                                                 │ RPC
                                                  TaskExecutor ──► CollectSinkWriter

The JobManager never decodes results: requests and responses are bytes it
forwards; only the sink (on a TaskExecutor) pickles records and only the
client unpickles them. The sink's buffer is bounded (``collect-sink.batch-size.max``):
a slow client blocks the sink task, which backpressures the job, and
nothing accumulates on the JobManager. When the sink's input ends, its
unacknowledged results leave with the task's final state as an accumulator
(Flink's way), so the job finishes without waiting for the client.
"""
