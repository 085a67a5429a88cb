import os
import tempfile

from pyflink.common import Types
from pyflink.common.serialization import Encoder
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSink, OutputFileConfig


def main():
    out = tempfile.mkdtemp()
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(2)
    sink = FileSink.for_row_format(out, Encoder.simple_string_encoder()) \
        .with_output_file_config(OutputFileConfig.builder().with_part_prefix("result").with_part_suffix(".txt").build()) \
        .build()
    env.from_collection([f"line-{i}" for i in range(8)], type_info=Types.STRING()).sink_to(sink)
    env.execute("file_sink_batch")
    files = []
    for root, _, names in os.walk(out):
        for name in names:
            if not name.startswith("."):
                files.append(name)
                with open(os.path.join(root, name)) as f:
                    for line in f:
                        print("written:", line.rstrip("\n"))
    print("part files named result-*.txt:", all(n.startswith("result-") and n.endswith(".txt") for n in files))


if __name__ == "__main__":
    main()
