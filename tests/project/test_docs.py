"""The documentation site: it builds without warnings, lists every public name, renders math
with no network, and its exercises and solutions have distinct titles."""

import inspect
import re

import attention_edu as ae

# `site` (the whole site, built once per session with -W) is a fixture of tests/conftest.py:
# the explorer's browser test opens its pages too.


def test_the_site_builds_with_the_book_theme(site):
    index = (site / "index.html").read_text()
    assert "notebooks/02_bahdanau_attention.html" in index
    assert "sphinx-book-theme" in index or "sphinx_book_theme" in index


def test_every_public_name_has_an_api_entry(site):
    api = (site / "api.html").read_text()
    for name in ae.__all__:
        obj = getattr(ae, name)
        anchor = f'id="module-{obj.__name__}"' if inspect.ismodule(obj) else f'id="attention_edu.{name}"'
        assert anchor in api, f"ae.{name} has no entry on the API page"
    assert "Examples" in api


def test_no_page_loads_a_script_from_another_host_and_math_renders_offline(site):
    pages = list(site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        text = page.read_text(errors="ignore")
        remote = re.findall(r"<script[^>]*\ssrc=\"((?:https?:)?//[^\"]+)\"", text)
        assert not remote, f"{page.name} loads {remote}"
    for name in ("05_scaling_and_softmax_saturation", "06_matrix_formulation_and_vectorization"):
        # the renderer ships with the site, on every page (the navigation's titles hold formulas too)
        assert "_static/mathjax/tex-chtml.js" in (site / "notebooks" / f"{name}.html").read_text()
    assert (site / "_static" / "mathjax" / "tex-chtml.js").exists()


def test_exercises_and_solutions_have_distinct_titles_in_the_navigation(site):
    index = (site / "index.html").read_text()
    links = dict(re.findall(r'<a class="reference internal" href="(notebooks/(?:exercises|solutions)/[^"]+)">'
                            r'([^<]+)</a>', index))  # href -> title (the sidebar and the page list repeat them)
    assert len(links) >= 10 and len(set(links.values())) == len(links), links
