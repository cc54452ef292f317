"""The chapters' ungraded practice: one ``<chapter>/spec.py`` per chapter.

Each is a lab spec in the autograder's format (:mod:`autograder.spec`) whose
cases are all public; a chapter's "try it" cell defines a stub, and the cell
after it calls ``check("exercise_id")``, which finds the exercise here. A stub
left as it is reports "not attempted", so the chapter still runs top to bottom.
These exercises are separate from the graded labs and share no ids with them.
"""
