"""Job artifacts from the JobManager to the TaskExecutors (Flink: BlobServer, BlobCache, LibraryCacheManager).

The Dispatcher puts a job's Python files into the :class:`BlobServer`
(content-addressed by sha256, one directory per job, deleted when the job is
globally terminal); JobMasters name the keys in every TaskDeploymentDescriptor;
each TaskExecutor fetches them once through its :class:`BlobCache` (hash
verified) and its :class:`LibraryCacheManager` makes them importable for that
job only, for as long as the job has tasks there.
"""

from flott.runtime.blob.blob_cache import BlobCache
from flott.runtime.blob.blob_server import BlobServer
from flott.runtime.blob.library_cache import JobLibraries, LibraryCacheManager
from flott.runtime.blob.protocol import BLOB_SERVER_PORT, BLOB_STORAGE_DIRECTORY

__all__ = [
    "BLOB_SERVER_PORT",
    "BLOB_STORAGE_DIRECTORY",
    "BlobCache",
    "BlobServer",
    "JobLibraries",
    "LibraryCacheManager",
]
