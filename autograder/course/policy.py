"""The late policy and which attempt counts: pure functions of times and scores.

With ``due`` the student's due date (the lab's, moved by their extension) and
``t`` the submission's time, the lateness is ``L = t - due``. Then

* ``L <= grace_hours``: on time, nothing is taken;
* otherwise ``days = ceil(L / 24 h)`` (every started day after the due date
  counts, the grace hours included) and the penalty is
  ``min(cap, per_day * days)``, a fraction of the score:

``final = points * (score / max_score) * (1 - penalty)``

``score`` is the grader's, with any instructor override put in place of its
exercise's score first (the penalty still applies to an overridden score).

Which attempt counts (``counts`` in the course file): ``"best"``, the highest
``final`` (a tie goes to the later attempt), or ``"latest"``, the last one
submitted, whatever it scored.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from .config import LatePolicy

DAY_S = 86400.0


@dataclass(frozen=True)
class Lateness:
    seconds: float       # after the (extended) due date; negative when early
    days: int            # days charged (0 when on time or within the grace hours)
    penalty: float       # fraction of the score taken, 0..cap

    @property
    def late(self) -> bool:
        return self.days > 0


def lateness(submitted: dt.datetime, due: dt.datetime, policy: LatePolicy) -> Lateness:
    """How late ``submitted`` is for ``due`` and what ``policy`` takes for it."""
    seconds = (submitted - due).total_seconds()
    if seconds <= policy.grace_hours * 3600.0:
        return Lateness(seconds, 0, 0.0)
    days = math.ceil(seconds / DAY_S)
    return Lateness(seconds, days, min(policy.cap, policy.per_day * days))


def final_points(score: float, max_score: float, points: float, penalty: float) -> float:
    """A lab's points in the LMS: its score rescaled to ``points``, less the penalty."""
    if max_score <= 0:
        return 0.0
    return points * (score / max_score) * (1.0 - penalty)


def counted(attempts: list[dict], counts: str) -> dict | None:
    """The attempt that counts among ``attempts`` (each with ``final`` and
    ``submitted_at``, an ISO string with offset), or ``None`` when there are none."""
    if not attempts:
        return None
    by_time = sorted(attempts, key=lambda a: (dt.datetime.fromisoformat(a["submitted_at"]),
                                              a["attempt"]))
    if counts == "latest":
        return by_time[-1]
    return max(reversed(by_time), key=lambda a: a["final"])
