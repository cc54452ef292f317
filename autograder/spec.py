"""What a lab's exercises are and how each is tested.

A lab lives in ``labs/<lab_id>/`` and its ``spec.py`` defines ``LAB = LabSpec(...)``.
The spec is imported ONLY by trusted code: the grading parent process and the
learner's own kernel (for ``check``, which uses public cases only). The sandboxed
child that runs submitted code never sees it.

Values that cross into the sandbox (a case's ``args``/``kwargs``) and back (what
the learner's function returns) must be *plain*: ``None``, ``bool``, ``int``,
``float``, ``complex``, ``str``, numpy arrays and scalars, and lists, tuples and
dicts (string keys) of those. See :mod:`autograder.codec`.

Scoring: each case is worth ``Case.points``; an exercise's score is the sum of its
passed cases' points, scaled to the exercise's ``points`` in the source notebook's
cell metadata (``{"exercise": {"id": ..., "points": N}}``).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

COMPARE_MODES = ("allclose", "equal", "set")
PUBLIC_CASES = "public_cases.json"
"""The file ``release`` writes next to a student notebook: each public case and its
expected value."""


@dataclass(frozen=True)
class Case:
    """One call of the learner's function: ``function(*args, **kwargs)``.

    ``hidden`` cases run only in grading; feedback shows only their name and
    pass/fail, never their inputs or expected values.
    """

    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    hidden: bool = False
    points: float = 1.0


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: the function the learner writes and its cases.

    ``reference(*args, **kwargs)`` runs in the trusted process and returns the
    expected plain value. ``compare`` is ``"allclose"`` (numbers and arrays with
    ``rtol``/``atol``, structure and shapes must match exactly), ``"equal"``
    (exact, including types of containers' elements after decoding), ``"set"``
    (same elements in any order) or a callable ``(expected, got) -> (ok, message)``.
    ``forbid_imports`` names top-level modules the submitted code may not import
    (``"torch"`` also forbids ``"torch.nn"``). ``timeout_s`` bounds the wall time
    (and CPU time) of all of this exercise's cases together in the sandbox.

    ``hints`` are tiers of help, from a nudge towards the idea (tier 1, shown on
    the first failure) to nearly the method (the last tier); the learner asks for
    more with ``check(id, hint=2)``. ``hint="..."`` is shorthand for one tier.
    ``hints_zh`` are the same tiers in Chinese, shown by ``check`` in a Chinese
    notebook; when empty, the Chinese report shows the English tiers.
    """

    id: str
    function: str
    cases: tuple[Case, ...]
    reference: Callable
    compare: str | Callable = "allclose"
    rtol: float = 1e-6
    atol: float = 1e-8
    forbid_imports: tuple[str, ...] = ()
    hint: str = ""
    timeout_s: float = 10.0
    hints: tuple[str, ...] = ()
    hints_zh: tuple[str, ...] = ()

    def __post_init__(self):
        hints = tuple(self.hints)
        if self.hint and hints and self.hint != hints[0]:
            raise ValueError(f"{self.id}: give hint= (one tier) or hints= (tiers), not both")
        if self.hint and not hints:
            hints = (self.hint,)
        object.__setattr__(self, "hints", hints)
        object.__setattr__(self, "hint", hints[0] if hints else "")
        object.__setattr__(self, "hints_zh", tuple(self.hints_zh))

    def hints_in(self, language: str) -> tuple[str, ...]:
        """The hint tiers in ``language`` (``"en"`` or ``"zh"``); English where the
        exercise has no translation."""
        return self.hints_zh if language == "zh" and self.hints_zh else self.hints

    @property
    def public_cases(self) -> tuple[Case, ...]:
        return tuple(c for c in self.cases if not c.hidden)

    @property
    def hidden_cases(self) -> tuple[Case, ...]:
        return tuple(c for c in self.cases if c.hidden)

    @property
    def case_points(self) -> float:
        return float(sum(c.points for c in self.cases))


@dataclass(frozen=True)
class LabSpec:
    """A lab: its exercises and the instructor source notebook they live in."""

    id: str
    title: str
    exercises: tuple[Exercise, ...]
    source: Path
    title_zh: str = ""

    def title_in(self, language: str) -> str:
        """The lab's title in ``language``; English where it has no translation."""
        return self.title_zh if language == "zh" and self.title_zh else self.title

    def exercise(self, exercise_id: str) -> Exercise:
        for ex in self.exercises:
            if ex.id == exercise_id:
                return ex
        known = ", ".join(ex.id for ex in self.exercises)
        raise KeyError(f"lab {self.id!r} has no exercise {exercise_id!r}; its exercises: {known}")

    def validate(self) -> None:
        """Raise ``ValueError`` naming the problem if the spec is inconsistent."""
        problems = []
        ids = [ex.id for ex in self.exercises]
        if len(set(ids)) != len(ids):
            problems.append(f"duplicate exercise ids in {ids}")
        for ex in self.exercises:
            names = [c.name for c in ex.cases]
            if len(set(names)) != len(names):
                problems.append(f"{ex.id}: duplicate case names in {names}")
            if not ex.cases:
                problems.append(f"{ex.id}: no cases")
            if not ex.public_cases:
                problems.append(f"{ex.id}: no public case, so check({ex.id!r}) could test nothing")
            if not callable(ex.compare) and ex.compare not in COMPARE_MODES:
                problems.append(f"{ex.id}: compare={ex.compare!r} is not one of {COMPARE_MODES} "
                                "or a callable")
            if any(c.points < 0 for c in ex.cases):
                problems.append(f"{ex.id}: negative case points")
            if ex.case_points <= 0:
                problems.append(f"{ex.id}: its cases are worth 0 points in total")
            if not all(isinstance(h, str) and h.strip() for h in ex.hints):
                problems.append(f"{ex.id}: every hint tier must be a non-empty string")
            if ex.hints_zh and len(ex.hints_zh) != len(ex.hints):
                problems.append(f"{ex.id}: hints_zh has {len(ex.hints_zh)} tier(s) but hints "
                                f"has {len(ex.hints)}; translate each English tier once")
            if not all(isinstance(h, str) and h.strip() for h in ex.hints_zh):
                problems.append(f"{ex.id}: every hints_zh tier must be a non-empty string")
            if ex.timeout_s <= 0:
                problems.append(f"{ex.id}: timeout_s must be positive")
        if not Path(self.source).is_file():
            problems.append(f"source notebook {self.source} does not exist")
        if problems:
            raise ValueError(f"lab spec {self.id!r} is inconsistent:\n  " + "\n  ".join(problems))


def load_lab(lab: str | Path) -> LabSpec:
    """Import a lab's spec and return its ``LAB``.

    ``lab`` is a lab id (``"lab1_graph"`` imports ``labs.lab1_graph.spec``) or the
    path of a directory holding a ``spec.py`` (handy for labs outside ``labs/``).
    """
    path = Path(lab)
    if path.is_dir() and (path / "spec.py").is_file():
        if _in_labs_package(path):
            return load_lab(path.resolve().name)
        module = _import_spec_file(path / "spec.py")
    else:
        lab_id = str(lab)
        if not lab_id.isidentifier():
            raise ValueError(f"{lab_id!r} is neither a lab id (like 'lab1_graph') nor a "
                             "directory containing spec.py")
        try:
            module = importlib.import_module(f"labs.{lab_id}.spec")
        except ModuleNotFoundError as err:
            if err.name not in (f"labs.{lab_id}", f"labs.{lab_id}.spec"):
                raise
            raise LookupError(f"no lab {lab_id!r}: expected labs/{lab_id}/spec.py") from err
    spec = getattr(module, "LAB", None)
    if not isinstance(spec, LabSpec):
        raise TypeError(f"{module.__name__} must define LAB = LabSpec(...), found {spec!r}")
    return spec


def _in_labs_package(path: Path) -> bool:
    try:
        import labs
    except ImportError:
        return False
    return path.resolve().parent == Path(labs.__file__).resolve().parent \
        and path.resolve().name.isidentifier()


def _import_spec_file(spec_path: Path):
    resolved = spec_path.resolve()
    name = f"_autograder_lab_{abs(hash(str(resolved))):x}"
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, resolved)
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
