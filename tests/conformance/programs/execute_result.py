"""env.execute() returns a JobExecutionResult."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection([1, 2, 3], type_info=Types.INT()).map(lambda x: x + 1, output_type=Types.INT()).print()
    result = env.execute("execute_result")
    print("job id is 32 hex digits:", len(str(result.get_job_id())) == 32)
    print("net runtime is an int >= 0:", isinstance(result.get_net_runtime(), int) and result.get_net_runtime() >= 0)
    print("job execution result has no accumulators:", result.get_all_accumulator_results() == {})


if __name__ == "__main__":
    main()
