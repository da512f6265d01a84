"""The documentation site builds without warnings (API pages, notebooks from stored outputs)."""

import pathlib
import subprocess
import sys

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


def test_sphinx_builds_without_warnings(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(DOCS), str(tmp_path / "html")],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    index = (tmp_path / "html" / "index.html").read_text()
    assert "notebooks/02_bahdanau_attention.html" in index
    api = (tmp_path / "html" / "api.html").read_text()
    assert "scaled_dot_product_attention" in api and "Examples" in api
