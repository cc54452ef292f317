import pytest
import torch


@pytest.fixture
def one_torch_thread():
    """Tiny models: torch's intra-op threads only contend with each other (and
    with other processes) on a small machine, making the runs slow and noisy."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
