"""`python -m planner ...` is the `gpu-platform` command."""
import sys

from gpu_platform.planner.cli import main

sys.exit(main())
