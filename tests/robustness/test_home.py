"""The suite never writes into the user's home: tests/conftest.py points HOME, XDG_CACHE_HOME and
CUDALENS_CACHE_DIR at a private temporary folder for every test (subprocesses inherit it)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from cudalens.measure.history import default_db_path


def test_home_and_caches_are_private():
    home = os.path.expanduser("~")
    tmp = os.path.realpath(tempfile.gettempdir())
    assert os.path.realpath(home).startswith(tmp), home
    assert os.environ["XDG_CACHE_HOME"].startswith(home)
    assert os.environ["CUDALENS_CACHE_DIR"].startswith(home)
    assert default_db_path().startswith(home)
    from cudalens.compiled.cache import cache_dir

    assert str(cache_dir()).startswith(home)


def test_subprocesses_see_the_private_home():
    out = subprocess.run([sys.executable, "-c", "import os; print(os.path.expanduser('~'))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == os.path.expanduser("~")
