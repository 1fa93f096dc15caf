"""``python -m aem.cli``: the same entry point as the ``aem`` command, for environments where
the console script is not on ``PATH`` (the live tests run it this way)."""

from aem.cli import main

main()
