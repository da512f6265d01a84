"""The documentation site: it builds without warnings, lists every public name, renders math
with no network, and its exercises and solutions have distinct titles."""

import inspect
import json
import pathlib
import re
import shutil
import subprocess

import pytest

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


def test_solution_pages_have_their_own_page_title(site):
    for exercise in (site / "notebooks" / "exercises").glob("*.html"):
        solution = site / "notebooks" / "solutions" / exercise.name
        title = re.search(r"<title>([^<]+)</title>", solution.read_text()).group(1)
        assert "— solutions" in title, title
        assert title != re.search(r"<title>([^<]+)</title>", exercise.read_text()).group(1)


def test_search_results_show_formulas_as_symbols_not_tex(site):
    assert "_static/search_math.js" in (site / "search.html").read_text()
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node to run the page script")
    script = (site / "_static" / "search_math.js").as_posix()
    cases = {r"dividing by \(\sqrt{d_k}\) keeps": "dividing by √d_k keeps",
             r"\(\text{softmax}(QK^\top/\sqrt{d_k})V\)": "softmax(QKᵀ/√d_k)V",
             r"\(J_{jk} = \alpha_j(\delta_{jk} - \alpha_k)\)": "J_jk = α_j(δ_jk - α_k)"}
    done = subprocess.run([node, "-e", f"const {{plainMath}} = require({json.dumps(script)});"
                           f"console.log(JSON.stringify({json.dumps(list(cases))}.map(plainMath)))"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == list(cases.values())


def test_notebook_tables_are_padded_and_long_api_names_fit_the_contents_sidebar(site):
    css = (site / "_static" / "wide.css").read_text()
    assert re.search(r"\.cell_output table th, \.cell_output table td \{ padding: [^;]*em", css)
    assert ".bd-sidebar-secondary" in css and "overflow-wrap: anywhere" in css


def test_a_site_for_a_class_leaves_the_solutions_out():
    """``-t without_solutions`` (docs/teachers.md, "Hand out"): docs/conf.py excludes the solved notebooks and
    takes their toctree out of the index, so that no page links one and -W finds no toctree entry pointing at an
    excluded page. (The conf read with the tag, and the real index through its source-read hook: a second build
    of the whole site would cost CI ten seconds.)"""
    docs = pathlib.Path(__file__).resolve().parents[2] / "docs"
    index = (docs / "index.md").read_text(encoding="utf-8")
    assert "notebooks/solutions/01_softmax_and_masks" in index
    for tagged in (False, True):
        conf = {"tags": type("Tags", (), {"has": lambda self, tag: tagged and tag == "without_solutions"})(),
                "__file__": str(docs / "conf.py")}
        exec(compile((docs / "conf.py").read_text(encoding="utf-8"), str(docs / "conf.py"), "exec"), conf)
        source = [index]
        conf["_insert_api"](None, "index", source)
        assert ("notebooks/solutions" in conf["exclude_patterns"]) is tagged
        assert ("notebooks/solutions/" in source[0]) is not tagged, source[0]
        assert source[0].count("```{toctree}") == index.count("```{toctree}") - tagged     # only the Solutions one
        assert "notebooks/exercises/01_softmax_and_masks" in source[0]
