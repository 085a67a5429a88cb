"""``pyflink.datastream.externalized_checkpoint_retention``: the import path PyFlink programs use.

The enum lives with the checkpoint settings that take it (:mod:`.checkpoint_config`).
"""

from flott.datastream.checkpoint_config import ExternalizedCheckpointRetention

__all__ = ["ExternalizedCheckpointRetention"]
