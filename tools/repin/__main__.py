"""``python -m tools.repin``: :func:`tools.repin.main.main`."""

from tools.repin.main import main

raise SystemExit(main())
