"""Shared fixtures of the model tests."""
import pytest
import torch


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models gain nothing from a second thread, and lose much when the cores are busy
    (used by the modules that train them: ``pytestmark = pytest.mark.usefixtures("one_thread")``)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
