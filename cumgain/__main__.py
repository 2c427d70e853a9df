import sys

from cumgain.cli import main

sys.exit(main())
