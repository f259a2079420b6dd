"""``python -m cosim`` is the ``cosim`` console command."""

from .cli import main

raise SystemExit(main())
