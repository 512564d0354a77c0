"""Settings for the test suite: production defaults, served over plain HTTP (the test client and
the live server speak HTTP; the HTTPS defaults themselves are tested through `check --deploy`)."""

from __future__ import annotations

import os

os.environ.setdefault("FIXBASE_HTTPS", "0")

from config.settings import *  # noqa: F403
