"""Sphinx configuration: API reference from the numpydoc docstrings, notebooks rendered by
myst-nb from their stored outputs (nbval checks in CI that those outputs are current)."""

project = "attention_edu"
author = "attention_edu developers"
extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc",
              "sphinx.ext.mathjax"]
nb_execution_mode = "off"
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
autosummary_generate = True
autodoc_typehints = "none"
myst_enable_extensions = ["dollarmath"]
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "notebooks/sanitize.cfg"]
html_theme = "alabaster"
html_title = "attention_edu"
suppress_warnings = ["mystnb.unknown_mime_type"]
