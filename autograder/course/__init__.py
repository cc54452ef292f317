"""A course, not just a lab: one term of labs, due dates, a late policy and a roster.

* :mod:`.config` reads and checks the course file (TOML);
* :mod:`.layout` finds the attempts on disk and when each was submitted;
* :mod:`.term` is the term gradebook (SQLite), every attempt and the overrides;
* :mod:`.grading` grades what is new with the per-lab grader (:mod:`autograder.grade`);
* :mod:`.policy` is the late policy and which attempt counts;
* :mod:`.standing` reads the gradebook through the policy;
* :mod:`.lms` exports Canvas, Moodle and plain CSV, and the feedback;
* :mod:`.report` is the class report across labs, with :mod:`.words` its words;
* :mod:`.cli` adds ``python -m autograder course ...``.
"""
