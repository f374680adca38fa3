"""Exercise checks: ``check(exercise_id, answer)`` prints ✓, or ✗ with a hint that never shows the solution, and
returns a :class:`Verdict`, truthy when the answer is right. ``values.py`` declares the exercises with one right
answer (computed by running PyTorch); ``functions.py`` judges the answers that are functions.

>>> from clonelab import check
>>> bool(check("demo.1", 5))
✗ demo.1: not yet. Hint: 2 + 2.
False
"""

from clonelab.exercises._core import Exercise, Unreadable, Verdict, check, exercise_ids, function, register
from clonelab.exercises import functions, values  # noqa: F401  (importing them registers their exercises)

__all__ = ["Exercise", "Unreadable", "Verdict", "check", "exercise_ids", "function", "register"]
