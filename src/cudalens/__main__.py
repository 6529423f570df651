import sys

from cudalens.cli import main

sys.exit(main())
