"""`python -m planner ...` is the `gpu-platform` command."""
import sys

from .cli import main

sys.exit(main())
