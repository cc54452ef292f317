"""chapters.as_torch is torch's namespace over the engines: the same engine
objects under torch's names, torch's dtype aliases, refusals that say what to
use, and save/load that round-trips state dicts without pickle."""

import io
import warnings

import numpy as np
import pytest
import torch

import chapters.amp
import chapters.as_torch as et
import chapters.autodiff as ad


def test_every_torch_dtype_name_is_an_engine_dtype_or_refused():
    names = [n for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype)]
    for name in names:
        try:
            ours = getattr(et, name)
        except NotImplementedError as err:
            assert f"torch.{name} is not implemented" in str(err)
            continue
        assert ours == ad.dtypes.as_dtype(getattr(torch, name)), name
    assert ad.long is et.long == np.dtype(np.int64) and ad.half == np.float16
    assert et.float == np.float32 and et.int == np.int32 and et.bool == np.bool_


def test_names_are_the_engine_objects_themselves():
    import chapters.as_torch.nn.functional as F
    from chapters.as_torch.utils.data import DataLoader

    assert et.nn.Linear is ad.nn.Linear and et.nn.Module is ad.nn.Module
    assert F is ad.functional and et.nn.init is ad.nn.init and et.nn.utils is ad.nn.utils
    assert et.optim is ad.optim and et.autograd.Function is ad.autograd.Function
    assert DataLoader is ad.data.DataLoader and et.Tensor is ad.Tensor
    assert et.amp.autocast is et.autocast is chapters.amp.autocast
    assert et.amp.GradScaler is chapters.amp.GradScaler
    assert et.no_grad is ad.no_grad and et.inference_mode is ad.inference_mode


def test_deprecated_cuda_amp_warns_with_torchs_text_and_is_disabled_as_on_a_cpu():
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        region, scaler = et.cuda.amp.autocast(), et.cuda.amp.GradScaler()
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.cuda.amp.autocast(), torch.cuda.amp.GradScaler()
    if torch.cuda.is_available():
        theirs = [w for w in theirs if w.category is FutureWarning]
        ours = [w for w in ours if w.category is FutureWarning]
    assert [(w.category, str(w.message)) for w in ours] == \
        [(w.category, str(w.message)) for w in theirs]
    assert not region.enabled and not scaler.is_enabled()


def test_unimplemented_names_refuse_with_what_to_do():
    with pytest.raises(NotImplementedError, match="torch.compile.*Drop torch.compile"):
        et.compile  # noqa: B018
    with pytest.raises(NotImplementedError, match="complex"):
        et.complex64  # noqa: B018
    assert not hasattr(et, "no_such_name")  # an unknown name stays an AttributeError


def test_save_load_round_trip_of_model_and_optimizer_state():
    model = et.nn.Linear(3, 2).to(et.bfloat16)
    opt = et.optim.AdamW(model.parameters(), lr=0.1)
    model(et.randn(4, 3, dtype=et.bfloat16)).float().sum().backward()
    opt.step()
    buf = io.BytesIO()
    et.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3,
             "best": float("inf")}, buf)
    buf.seek(0)
    back = et.load(buf)
    assert back["epoch"] == 3 and back["best"] == float("inf")
    for key, value in model.state_dict().items():
        assert back["model"][key].dtype == et.bfloat16
        np.testing.assert_array_equal(back["model"][key].float().numpy(), value.float().numpy())
    assert list(back["opt"]["state"]) == [0, 1]  # int keys come back as ints
    assert back["opt"]["param_groups"][0]["betas"] == (0.9, 0.999)
    fresh = et.optim.AdamW(et.nn.Linear(3, 2).parameters())
    fresh.load_state_dict(back["opt"])
    np.testing.assert_array_equal(fresh.state_dict()["state"][0]["exp_avg"],
                                  opt.state_dict()["state"][0]["exp_avg"])


def test_save_refuses_code_and_load_refuses_torch_pickles(tmp_path):
    with pytest.raises(TypeError, match=r"Save model.state_dict\(\) instead"):
        et.save(et.nn.Linear(2, 2), io.BytesIO())
    with pytest.raises(TypeError, match="never code"):
        et.save({"f": print}, io.BytesIO())
    torch.save({"w": torch.ones(2)}, tmp_path / "real.pt")
    with pytest.raises(RuntimeError, match="pickle format.*never unpickle"):
        et.load(tmp_path / "real.pt")
