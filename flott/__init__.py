"""flott: Apache Flink's cluster runtime, native in Python, with PyFlink's DataStream API."""

from flott.client import user_errors as _user_errors

_user_errors.install()
