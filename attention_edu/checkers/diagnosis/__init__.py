"""Diagnosis: matching a failure to a named mistake, or showing the evidence.

:mod:`.mutants` holds the registry of known mistakes (each with a wrong implementation),
:mod:`.identity` matches a failing output against them, :mod:`.compare` compares and
describes arrays, :mod:`.hints` explains errors and harness findings.
"""
