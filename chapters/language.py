"""Which language the course speaks right now: ``'en'`` or ``'zh'``.

The Chinese chapters run the very same code cells as the English ones, so a
figure cannot be told its language by the cell that draws it; it asks
:func:`language`, which looks, in this order, at

1. an explicit :func:`set_language` (``set_language(None)`` forgets it);
2. the environment variable ``COURSE_LANG`` (``make lab LANG=zh`` and the
   notebook test harness set it);
3. the notebook's own path, which Jupyter's server hands to the kernel as the
   environment variable ``JPY_SESSION_NAME`` (ipykernel 6.23+ also copies it
   into the user namespace as ``__session__``): a folder named ``zh`` or a
   name ending in ``.zh.ipynb`` means Chinese;
4. otherwise English.

One choice for the whole course: vizkit's figures and the autograder's
in-notebook checker both ask this module (the checker adds what only it can
see: a released notebook's metadata and its ``public_cases.json``). It imports
nothing but the standard library, so the autograder can ask it without loading
plotting or numerical packages.
"""

from __future__ import annotations

import os
import sys
from pathlib import PurePath

LANGUAGES = ("en", "zh")
ENV_VAR = "COURSE_LANG"

_chosen: str | None = None


def _checked(value: str, where: str) -> str:
    code = value.strip().lower().replace("_", "-").split("-")[0]
    if code not in LANGUAGES:
        raise ValueError(f"{where}: unknown language {value!r}; use one of {', '.join(LANGUAGES)} "
                         "('zh-CN' and 'zh_CN' are read as 'zh')")
    return code


def set_language(value: str | None) -> None:
    """Make every later figure and self-check speak ``value`` ('en' or 'zh'); ``None`` goes back
    to reading the environment and the notebook's path."""
    global _chosen
    _chosen = None if value is None else _checked(value, "set_language")


def language_of_path(path: str) -> str | None:
    """``'zh'`` for a path inside a ``zh`` folder or named ``*.zh.ipynb``, else ``None``."""
    pure = PurePath(path)
    if "zh" in pure.parts[:-1] or pure.name.endswith(".zh.ipynb"):
        return "zh"
    return None


def notebook_path(namespace: dict | None = None) -> str | None:
    """The running notebook's path as the Jupyter server told the kernel, if it did:
    ``JPY_SESSION_NAME``, else ``__session__`` in ``namespace`` (by default the
    IPython user namespace, when there is a shell)."""
    path = os.environ.get("JPY_SESSION_NAME")
    if path:
        return path
    if namespace is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
        namespace = shell.user_ns if shell is not None else {}
    return namespace.get("__session__")


def chosen_language() -> str | None:
    """An explicit choice, then ``COURSE_LANG``, then the notebook's path; ``None``
    when none of them says anything."""
    if _chosen is not None:
        return _chosen
    from_env = os.environ.get(ENV_VAR, "").strip()
    if from_env:
        return _checked(from_env, f"environment variable {ENV_VAR}")
    path = notebook_path()
    return (path and language_of_path(path)) or None


def language() -> str:
    """'en' or 'zh': :func:`chosen_language`, or English when nothing is chosen."""
    return chosen_language() or "en"
