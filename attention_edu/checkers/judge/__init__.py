"""The judge: running a student's submission in isolation, grading it, reporting the rows.

:mod:`.isolation` and :mod:`.harness` run one call in a child process with limits;
:mod:`.submission` loads a ``.py`` file or an exercise notebook; :mod:`.command` is
``attention-edu check`` and :mod:`.grade` is ``attention-edu grade``.
"""
