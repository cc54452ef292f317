"""``Module`` and ``Parameter``: how a model owns its weights.

A module is a tree. Each node keeps three ordered tables, exactly as PyTorch's
``torch.nn.Module`` does:

* ``_parameters``: trainable tensors (``Parameter``), found by the optimizer;
* ``_buffers``: state that is saved but not trained (BatchNorm's running mean);
* ``_modules``: child modules.

Assigning an attribute files the value in the right table (``__setattr__``),
so ``self.fc = Linear(3, 4)`` is all a layer has to write. Every traversal
(``named_parameters``, ``state_dict``, ``train``/``eval``, ``to``) is a walk
over this tree with dotted names (``"0.weight"``, ``"block.norm.bias"``) that
are the same as torch's, which is why a torch ``state_dict`` loads unchanged.

Hooks (钩子) let code outside a module watch or change a call: a forward
pre-hook sees (and may replace) the arguments, a forward hook the output, and a
full backward hook sees dL/d(outputs) and dL/d(tensor arguments) during
backward. The backward ones are built from the engine's own autograd: the
arguments and the outputs pass through identity functions
(:class:`~chapters.autodiff.autograd.function.Function`) whose backward is
where the hooks run. Not mirrored from torch: global hooks
(``register_module_forward_hook``), ``always_call``, state-dict hooks and the
deprecated ``register_backward_hook``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator

import numpy as np

from ..autograd.function import Function
from ..core import TensorBase
from ..device import check_cpu
from ..dtypes import bfloat16
from ..grad_mode import no_grad
from ..interop import to_numpy
from ..modes import MODES
from ..node import RemovableHandle
from ..tensor import Tensor


class Parameter(Tensor):
    """A tensor that is a trainable weight of a module (``requires_grad=True``).

    Like ``torch.nn.Parameter`` it is a leaf: the optimizer updates its
    ``.data`` in place and backward accumulates into its ``.grad``.
    """

    def __init__(self, data, requires_grad: bool = True):
        array = data.data if isinstance(data, Tensor) else np.asarray(data)
        super().__init__(array, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Base class of every layer and model (PyTorch's ``nn.Module`` names)."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ------------------------------------------------------------ registration

    def __setattr__(self, name: str, value) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign {name!r} before Module.__init__() was called: "
                f"call super().__init__() first in {type(self).__name__}.__init__")
        if name in self._buffers and not isinstance(value, Parameter | Module):
            self._buffers[name] = value  # re-assigning a registered buffer keeps it one
            return
        if value is None and name in self._parameters:
            self._parameters[name] = None  # a declared-but-absent parameter, as torch
            return
        target = (self._parameters if isinstance(value, Parameter)
                  else self._modules if isinstance(value, Module) else None)
        for table in (self._parameters, self._buffers, self._modules):
            if table is not target:  # a re-assigned entry keeps its place, as torch's
                table.pop(name, None)
        if target is None:
            object.__setattr__(self, name, value)
            return
        target[name] = value
        self.__dict__.pop(name, None)

    def __getattr__(self, name: str):
        # Only called when normal lookup fails: look in the three tables.
        for table in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__.get(table, {})
            if name in entries:
                return entries[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or ``None``: a declared but absent one, like ``bias=False``)."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot register {type(param).__name__} as parameter {name!r}: "
                            "wrap it in nn.Parameter(...)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add state that is not trained. Persistent buffers go into ``state_dict``."""
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass: only modules can "
                            f"be registered as {name!r} (wrap a weight in nn.Parameter and "
                            "use register_parameter instead)")
        self._modules[name] = module

    # --------------------------------------------------------------- traversal

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This module and every descendant, depth first, with dotted names."""
        stack = [(prefix, self)]
        seen = set()
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = [(f"{name}.{n}" if name else n, m)
                        for n, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        for name, module in self._modules.items():
            if module is not None:
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named_members(self, table: str, prefix: str, recurse: bool,
                       remove_duplicate: bool) -> Iterator[tuple[str, Tensor]]:
        """Entries of ``table`` in this module (and its descendants if ``recurse``)
        with dotted names; a shared (tied) weight is listed once unless
        ``remove_duplicate=False``, as in torch."""
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        seen = set()
        for module_prefix, module in modules:
            for name, value in getattr(module, table).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def get_submodule(self, target: str) -> Module:
        """The descendant at dotted path ``target`` (``""`` is this module)."""
        module = self
        for name in target.split(".") if target else ():
            if name not in module._modules or module._modules[name] is None:
                raise AttributeError(f"{type(module).__name__} has no submodule {name!r} "
                                     f"(looking up {target!r}); its children are "
                                     f"{list(module._modules)}")
            module = module._modules[name]
        return module

    def _get_member(self, target: str, table: str, kind: str):
        owner_path, _, name = target.rpartition(".")
        owner = self.get_submodule(owner_path)
        if name not in getattr(owner, table):
            raise AttributeError(f"{target!r} is not a {kind} of {type(self).__name__}: "
                                 f"{type(owner).__name__} has {kind}s "
                                 f"{list(getattr(owner, table))}")
        return getattr(owner, table)[name]

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target`` (``"encoder.0.weight"``)."""
        return self._get_member(target, "_parameters", "parameter")

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target`` (``"norm.running_mean"``)."""
        return self._get_member(target, "_buffers", "buffer")

    # ------------------------------------------------------------------ modes

    def train(self, mode: bool = True) -> Module:
        """Switch this module and all descendants to training mode (Dropout
        drops, BatchNorm uses batch statistics and updates running ones)."""
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self) -> Module:
        """``train(False)``: Dropout is the identity, BatchNorm uses running stats."""
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient. ``set_to_none=True`` (torch's default
        since 2.0) frees the arrays instead of filling them with zeros."""
        for param in self.parameters():
            if set_to_none:
                param.grad = None
            elif param.grad is not None:
                param.grad.data[...] = 0

    def apply(self, fn) -> Module:
        """Call ``fn(module)`` on every child's subtree, then on this module
        (children first, so ``fn`` sees a module after everything inside it);
        returns self. The usual use: ``model.apply(init_weights)``."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for param in self.parameters():
            param.requires_grad = requires_grad
        return self

    # ---------------------------------------------------------------- dtypes

    def to(self, *args, dtype=None, device=None, **_) -> Module:
        """Cast floating-point parameters and buffers to ``dtype`` in place
        (integer buffers such as ``num_batches_tracked`` keep their dtype, as
        in torch). Gradients are dropped because their dtype would no longer match.
        A device (``to("cpu")``, ``to(device)``) is accepted when it is the CPU,
        the one device this engine has; ``to(tensor)`` takes the tensor's dtype."""
        for arg in (*args, device):
            if isinstance(arg, str):  # a device name; torch.device is a str here
                check_cpu("Module.to", arg)
            elif isinstance(arg, Tensor):
                dtype = arg.dtype
            elif arg is not None:
                dtype = arg
        if dtype is None:
            return self
        dtype = np.dtype(dtype)
        if not np.issubdtype(dtype, np.floating) and dtype.kind != "V":
            raise TypeError(f"Module.to() only casts to floating-point dtypes, got {dtype}")
        for module in self.modules():
            for table in (module._parameters, module._buffers):
                for value in table.values():
                    if value is not None and _is_floating(value.data.dtype):
                        value.data = value.data.astype(dtype)
                        if value.grad is not None:
                            value.grad = None
        return self

    def cpu(self) -> Module:
        return self

    def cuda(self, device=None) -> Module:
        check_cpu("Module.cuda", device or "cuda")
        return self

    def half(self) -> Module:
        return self.to(np.float16)

    def float(self) -> Module:
        return self.to(np.float32)

    def double(self) -> Module:
        return self.to(np.float64)

    def bfloat16(self) -> Module:
        return self.to(bfloat16)

    # ------------------------------------------------------------ state dicts

    def state_dict(self) -> OrderedDict[str, Tensor]:
        """Every parameter and persistent buffer by dotted name, as detached
        tensors sharing memory with the module (as torch's)."""
        out: OrderedDict[str, Tensor] = OrderedDict()
        for prefix, module in self.named_modules():
            for name, value in module._parameters.items():
                if value is not None:
                    out[f"{prefix}.{name}" if prefix else name] = value.detach()
            for name, value in module._buffers.items():
                if value is not None and name not in module._non_persistent:
                    out[f"{prefix}.{name}" if prefix else name] = value.detach()
        return out

    def load_state_dict(self, state_dict, strict: bool = True):
        """Copy values into this module's parameters and buffers, in place.

        ``state_dict`` may come from this engine or from **PyTorch**
        (``torch_model.state_dict()``): values are read through
        :func:`chapters.autodiff.interop.to_numpy` and cast to the receiving tensor's
        dtype, so an engine model and a torch model can start from identical
        weights. Returns ``(missing_keys, unexpected_keys)`` like torch;
        ``strict=True`` raises on either.
        """
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict into {type(self).__name__}: missing keys {missing}, "
                           f"unexpected keys {unexpected}. The module and the state_dict must "
                           "come from the same architecture (pass strict=False to allow this).")
        with no_grad():
            for key, target in own.items():
                if key not in state_dict:
                    continue
                value = to_numpy(state_dict[key])
                if value.shape != target.shape:
                    raise ValueError(f"load_state_dict: {key!r} has shape {tuple(value.shape)} "
                                     f"in the state_dict but {tuple(target.shape)} in the module")
                target.data[...] = value.astype(target.data.dtype)
        return missing, unexpected

    # ----------------------------------------------------------------- calling

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    #: ``{"pre": [...], "forward": [...], "backward_pre": [...], "backward": [...]}``
    #: once a hook is registered; ``None`` keeps ``__call__`` a plain ``forward`` call.
    _module_hooks = None

    def __call__(self, *args, **kwargs):
        if self._module_hooks is None:
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        """torch's order: pre-hooks (may replace the arguments), ``forward``,
        forward hooks (may replace the output); a full backward hook wraps the
        tensor arguments and the outputs in identity functions whose backward
        sees ``grad_input`` and ``grad_output``."""
        hooks = self._module_hooks
        for fn, with_kwargs in list(hooks["pre"]):
            result = fn(self, args, kwargs) if with_kwargs else fn(self, args)
            if result is not None and with_kwargs:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"a forward pre-hook registered with with_kwargs=True must return None "
                        f"or a tuple (new_args, new_kwargs), but got {result!r}")
                args, kwargs = result
            elif result is not None:
                args = result if isinstance(result, tuple) else (result,)
        watch = (hooks["backward"] or hooks["backward_pre"]) and MODES.grad_enabled
        if watch:
            state = _BackwardHookState(self, hooks)
            args = state.wrap_inputs(args)
        output = self.forward(*args, **kwargs)
        for fn, with_kwargs in list(hooks["forward"]):
            result = fn(self, args, kwargs, output) if with_kwargs else fn(self, args, output)
            if result is not None:
                output = result
        return state.wrap_outputs(output) if watch else output

    def _add_hook(self, kind: str, fn, with_kwargs: bool, prepend: bool) -> RemovableHandle:
        if not callable(fn):
            raise TypeError(f"a module hook must be callable, got {type(fn).__name__}")
        if self._module_hooks is None:
            object.__setattr__(self, "_module_hooks",
                               {"pre": [], "forward": [], "backward_pre": [], "backward": []})
        entry = (fn, with_kwargs)
        hooks = self._module_hooks[kind]
        hooks.insert(0, entry) if prepend else hooks.append(entry)
        return RemovableHandle(hooks, entry)

    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; a non-``None`` result
        replaces ``args`` (a single value is made a 1-tuple). With
        ``with_kwargs=True``: ``hook(module, args, kwargs)`` returning ``(args, kwargs)``."""
        return self._add_hook("pre", hook, with_kwargs, prepend)

    def register_forward_hook(self, hook, *, prepend: bool = False,
                              with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward``; a non-``None``
        result replaces the output. With ``with_kwargs=True``:
        ``hook(module, args, kwargs, output)``."""
        return self._add_hook("forward", hook, with_kwargs, prepend)

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs during backward once the
        gradients of the module's tensor arguments are known: ``grad_output[i]``
        is dL/d(output i), ``grad_input[j]`` is dL/d(tensor argument j) (``None``
        where that argument needs no gradient). A non-``None`` result (a tuple
        as long as ``grad_input``) replaces ``grad_input``."""
        return self._add_hook("backward", hook, False, prepend)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs during backward when the gradients
        of the module's outputs arrive, before they flow into the module; a
        non-``None`` result (a tuple as long as ``grad_output``) replaces them."""
        return self._add_hook("backward_pre", hook, False, prepend)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        children = [f"  ({name}): " + repr(m).replace("\n", "\n  ")
                    for name, m in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        return head + ")" if not children else head + "\n" + "\n".join(children) + "\n)"


class _BackwardHookState:
    """One call's bookkeeping for full backward hooks, laid out as torch's:
    ``grad_input`` has one entry per positional argument (``None`` for a
    non-tensor, zeros for a tensor that needs no gradient), ``grad_output`` one
    per output (``None`` for one that needs no gradient). The outputs'
    gradients are stored when they arrive; the hooks run when the inputs' do."""

    def __init__(self, module: Module, hooks: dict):
        self.module, self.hooks = module, hooks
        self.grad_output: tuple = ()
        self.n_args = 0
        self.tensor_positions: list[int] = []
        self.n_outputs = 0
        self.output_positions: list[int] = []

    def wrap_inputs(self, args: tuple) -> tuple:
        self.n_args = len(args)
        positions = [i for i, a in enumerate(args) if isinstance(a, TensorBase)]
        if not any(args[i]._requires_grad for i in positions):
            return args
        self.tensor_positions = positions
        wrapped = list(args)
        for i, tensor in zip(positions, _InputsHook.apply(self, *[args[i] for i in positions]),
                             strict=True):
            wrapped[i] = tensor
        return tuple(wrapped)

    def wrap_outputs(self, output):
        outputs = output if isinstance(output, tuple) else (output,)
        positions = [i for i, o in enumerate(outputs)
                     if isinstance(o, TensorBase) and o._requires_grad]
        if not positions:
            return output
        self.output_positions, self.n_outputs = positions, len(outputs)
        wrapped = list(outputs)
        for i, tensor in zip(positions, _OutputsHook.apply(self, *[outputs[i] for i in positions]),
                             strict=True):
            wrapped[i] = tensor
        return tuple(wrapped) if isinstance(output, tuple) else wrapped[0]

    def outputs_arrived(self, grads: tuple) -> tuple:
        """Run the pre-hooks on the outputs' gradients and keep what they give;
        returns the gradients that flow on into the module."""
        grad_output = _spread(grads, self.output_positions, self.n_outputs)
        for fn, _ in list(self.hooks["backward_pre"]):
            result = fn(self.module, grad_output)
            if result is not None:
                grad_output = _checked(self.module, result, len(grad_output), "outputs")
        self.grad_output = grad_output
        if not self.tensor_positions:  # no input needs a gradient: run the hooks now
            self.run((None,) * self.n_args)
        return tuple(grad_output[i] for i in self.output_positions)

    def inputs_arrived(self, grads: tuple) -> tuple:
        grad_input = self.run(_spread(grads, self.tensor_positions, self.n_args))
        return tuple(grad_input[i] for i in self.tensor_positions)

    def run(self, grad_input: tuple) -> tuple:
        for fn, _ in list(self.hooks["backward"]):
            result = fn(self.module, grad_input, self.grad_output)
            if result is not None:
                grad_input = _checked(self.module, result, len(grad_input), "positional arguments")
        return grad_input


def _checked(module: Module, result, expected: int, what: str) -> tuple:
    """A hook's replacement gradients, which must be one per entry it was given."""
    result = tuple(result)
    if len(result) != expected:
        raise RuntimeError(
            f"a backward hook of {type(module).__name__} returned {len(result)} gradients, "
            f"but the module has {expected} {what}: return one gradient (or None) per "
            "entry it was given")
    return result


def _spread(values: tuple, positions: list[int], size: int) -> tuple:
    """``values`` placed at ``positions`` of a ``size``-tuple of ``None``s."""
    out = [None] * size
    for i, value in zip(positions, values, strict=True):
        out[i] = value
    return tuple(out)


class _InputsHook(Function):
    """Identity on the module's tensor arguments; its backward runs the hooks."""

    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        ctx.mark_non_differentiable(*[t for t in tensors if not t._requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.state.inputs_arrived(grads))


class _OutputsHook(Function):
    """Identity on the module's outputs; its backward runs the pre-hooks and
    records ``grad_output``."""

    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.state.outputs_arrived(grads))


def _is_floating(dtype) -> bool:
    dtype = np.dtype(dtype)
    return np.issubdtype(dtype, np.floating) or dtype.name in ("bfloat16",)
