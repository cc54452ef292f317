"""``torch.save`` / ``torch.load`` for state dicts, in a format that holds no code.

torch's files are pickles, and unpickling runs whatever the file says
(torch 2.6 made ``torch.load(..., weights_only=True)`` the default for that
reason). The engines never unpickle. A file here is a zip archive of

* ``structure.json`` — the object's shape: dicts (keys kept with their type,
  so an optimizer's ``{0: {...}}`` comes back with int keys), ``OrderedDict``,
  lists, tuples, ``None``, bools, ints, floats (``inf``/``nan`` included),
  strings, and references ``{"tensor": k}`` / ``{"ndarray": k}`` to
* ``arrays.npz`` — the k-th array, read back with ``allow_pickle=False``;
  float16/bfloat16 values stored as their raw 16 bits and the dtype named in
  the JSON (numpy's .npy has no bfloat16).

What ``weights_only=True`` allows in torch is what this format can hold, so
``load`` accepts ``weights_only`` True, None (torch's default, True) or False
(the same reader: there is nothing else to allow). Saving anything else — a
whole ``nn.Module``, a function, an arbitrary object — is refused with the
state-dict spelling to use; a torch pickle is refused on load, never opened.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections import OrderedDict

import numpy as np

from chapters.autodiff import Tensor, dtypes, tensor

FORMAT = "chapters.as_torch state v1"
_BITS = {"bfloat16": dtypes.bfloat16, "float16": dtypes.float16}


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Write ``obj`` (a state dict, an optimizer's, or nested dicts/lists of them
    with numbers and strings) to the path or binary file ``f``."""
    if pickle_module is not None:
        raise ValueError("torch.save(pickle_module=...): the engines' files are not pickles; "
                         "drop the argument")
    arrays: list[np.ndarray] = []
    structure = {"format": FORMAT, "object": _encode(obj, arrays, "obj")}
    buffer = io.BytesIO()
    np.savez(buffer, **{f"a{k}": a for k, a in enumerate(arrays)})
    with _open(f, "wb") as stream, zipfile.ZipFile(stream, "w") as archive:
        archive.writestr("structure.json", json.dumps(structure))
        archive.writestr("arrays.npz", buffer.getvalue())


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **kwargs):
    """Read what :func:`save` wrote; engine tensors come back as engine tensors."""
    if map_location not in (None, "cpu") and str(map_location) != "cpu":
        raise ValueError(f"torch.load(map_location={map_location!r}): the engines hold every "
                         "tensor on the CPU; pass map_location='cpu' or leave it out")
    if pickle_module is not None or kwargs:
        raise ValueError("torch.load: the engines' files are not pickles; pickle_module and "
                         f"pickle load arguments ({sorted(kwargs)}) do not apply")
    if weights_only not in (None, True, False):
        raise TypeError(f"torch.load(weights_only={weights_only!r}): expected a bool")
    with _open(f, "rb") as stream:
        try:
            archive = zipfile.ZipFile(stream)
        except zipfile.BadZipFile:
            raise _not_ours(f, "it is not a zip archive (an old torch pickle, or not a "
                               "checkpoint at all)") from None
        with archive:
            names = set(archive.namelist())
            if not {"structure.json", "arrays.npz"} <= names:
                hint = ("it is torch's pickle format" if any(n.endswith("data.pkl")
                                                              for n in names) else
                        f"it holds {sorted(names)[:4]}")
                raise _not_ours(f, hint)
            structure = json.loads(archive.read("structure.json"))
            if structure.get("format") != FORMAT:
                raise _not_ours(f, f"its format is {structure.get('format')!r}")
            with np.load(io.BytesIO(archive.read("arrays.npz")), allow_pickle=False) as npz:
                arrays = [npz[f"a{k}"] for k in range(len(npz.files))]
    return _decode(structure["object"], arrays)


def _not_ours(f, why: str) -> Exception:
    return RuntimeError(
        f"torch.load({f!r}): not a file the course's engines wrote, because {why}. The engines "
        "never unpickle (that could run code from the file). Save it again from the engines "
        "with torch.save(model.state_dict(), path), or, in real torch, load it and copy the "
        "values in with engine_model.load_state_dict(torch_state_dict).")


def _open(f, mode: str):
    if isinstance(f, str | os.PathLike):
        return open(f, mode)
    if not hasattr(f, "write" if "w" in mode else "read"):
        raise TypeError(f"torch.save/load: expected a path or a binary file object, got "
                        f"{type(f).__name__}")
    return _Borrowed(f)


class _Borrowed:
    """A caller's file object: used, not closed."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def _array_entry(kind: str, array: np.ndarray, arrays: list, extra: dict) -> dict:
    name = array.dtype.name
    if name in _BITS:
        array = array.view(np.uint16)
    arrays.append(np.ascontiguousarray(array))
    return {kind: len(arrays) - 1, "dtype": name, **extra}


def _encode(obj, arrays: list, where: str):
    if obj is None or isinstance(obj, bool | int | str):
        return obj
    if isinstance(obj, float):
        return {"float": repr(obj)}  # inf and nan survive, bit for bit
    if isinstance(obj, Tensor):
        return _array_entry("tensor", obj.detach().numpy(), arrays,
                            {"requires_grad": bool(obj.requires_grad)})
    if isinstance(obj, np.ndarray):
        return _array_entry("ndarray", obj, arrays, {})
    if isinstance(obj, np.generic):
        return _encode(obj.item(), arrays, where)
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if not isinstance(key, str | int) or isinstance(key, bool):
                raise TypeError(f"torch.save: key {key!r} at {where} is a "
                                f"{type(key).__name__}; the engines' files keep str and int keys")
            items.append([key, _encode(value, arrays, f"{where}[{key!r}]")])
        return {"ordered_dict" if isinstance(obj, OrderedDict) else "dict": items}
    if isinstance(obj, list | tuple):
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(obj)]}
    hint = (" Save model.state_dict() instead (and rebuild the model from its class before "
            "load_state_dict): torch 2.6+ refuses to load whole modules by default too."
            if hasattr(obj, "state_dict") else "")
    raise TypeError(f"torch.save: {where} is a {type(obj).__name__}; the engines' files hold "
                    f"tensors, arrays, numbers, strings, None, and dicts/lists/tuples of "
                    f"them, never code.{hint}")


def _decode(node, arrays: list):
    if not isinstance(node, dict):
        return node
    if "float" in node:
        return float(node["float"])
    for kind in ("tensor", "ndarray"):
        if kind in node:
            array = arrays[node[kind]]
            if node["dtype"] in _BITS:
                array = array.view(_BITS[node["dtype"]])
            if kind == "ndarray":
                return array
            out = tensor(array)
            return out.requires_grad_() if node["requires_grad"] else out
    if "dict" in node or "ordered_dict" in node:
        pairs = [(k, _decode(v, arrays)) for k, v in node.get("dict", node.get("ordered_dict"))]
        return OrderedDict(pairs) if "ordered_dict" in node else dict(pairs)
    if "tuple" in node:
        return tuple(_decode(v, arrays) for v in node["tuple"])
    return [_decode(v, arrays) for v in node["list"]]


__all__ = ["load", "save"]
