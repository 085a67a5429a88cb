"""Word count, written as a PyFlink DataStream program (only the import prefix differs).

flott run examples/word_count.py --input some.txt --output counts/
python examples/word_count.py --input some.txt --output counts/
"""

import argparse
import sys

from flott.common import Encoder, Types, WatermarkStrategy
from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.datastream.connectors.file_system import FileSink, FileSource, OutputFileConfig, StreamFormat

SAMPLE = [
    "To be, or not to be,--that is the question:--",
    "Whether 'tis nobler in the mind to suffer",
    "The slings and arrows of outrageous fortune",
    "Or to take arms against a sea of troubles,",
    "And by opposing end them?--To die,--to sleep,--",
]


def word_count(input_path: str | None, output_path: str | None, parallelism: int | None, mode: str) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH if mode == "batch" else RuntimeExecutionMode.STREAMING)
    if parallelism:
        env.set_parallelism(parallelism)

    if input_path is not None:
        source = (
            FileSource.for_record_stream_format(StreamFormat.text_line_format(), input_path)
            .process_static_file_set()
            .build()
        )
        ds = env.from_source(source, WatermarkStrategy.no_watermarks(), "file_source").uid("lines")
    else:
        print("Reading the built-in sample text; use --input to read a file.", file=sys.stderr)
        ds = env.from_collection(SAMPLE).uid("lines")

    def split(line):
        yield from line.split()

    ds = (
        ds.flat_map(split)
        .map(lambda word: (word, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1])).uid("count-per-word")
    )

    if output_path is not None:
        ds.sink_to(
            sink=FileSink.for_row_format(base_path=output_path, encoder=Encoder.simple_string_encoder())
            .with_output_file_config(
                OutputFileConfig.builder().with_part_prefix("prefix").with_part_suffix(".ext").build()
            )
            .build()
        ).uid("counts-sink")
    else:
        ds.print().uid("print")

    env.execute("word_count")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", dest="input", required=False, help="Input file or directory.")
    parser.add_argument("--output", dest="output", required=False, help="Output directory.")
    parser.add_argument("--parallelism", type=int, default=None)
    parser.add_argument("--mode", choices=["streaming", "batch"], default="streaming")
    known, _ = parser.parse_known_args(sys.argv[1:])
    word_count(known.input, known.output, known.parallelism, known.mode)
