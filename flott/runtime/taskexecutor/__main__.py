import sys

from flott.runtime.taskexecutor.runner import main

sys.exit(main())
