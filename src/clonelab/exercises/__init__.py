"""Exercise checks: ``check(exercise_id, answer)`` prints ✓, or ✗ with a hint that never shows the solution, and
returns a :class:`Verdict`, truthy when the answer is right. ``nb01_05``, ``nb06_10`` and ``quiz`` declare them."""

from clonelab.exercises._core import Exercise, Unreadable, Verdict, check, exercise_ids, function, register
from clonelab.exercises import nb01_05, nb06_10, quiz  # noqa: F401  (importing them registers their exercises)

__all__ = ["Exercise", "Unreadable", "Verdict", "check", "exercise_ids", "function", "register"]
