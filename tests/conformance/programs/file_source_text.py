import os
import tempfile

from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSource, StreamFormat


def main():
    directory = tempfile.mkdtemp()
    for name, lines in (("a.txt", ["alpha 1", "beta 2"]), ("b.txt", ["gamma 3", "delta 4", "epsilon 5"])):
        with open(os.path.join(directory, name), "w") as f:
            f.write("\n".join(lines) + "\n")
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), directory).build()
    lines = env.from_source(source, WatermarkStrategy.no_watermarks(), "files")
    lines.map(lambda line: (line.split()[0], int(line.split()[1]) * 10),
              output_type=Types.TUPLE([Types.STRING(), Types.INT()])).print()
    env.execute("file_source_text")


if __name__ == "__main__":
    main()
