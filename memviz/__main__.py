import sys

from memviz.cli import main

sys.exit(main())
