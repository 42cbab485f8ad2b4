"""Checkpoints of CUDA tensors in PyTorch's format: minitorch.save records each storage's device
("cuda:0"), minitorch.load puts it back there unless map_location says otherwise, and PyTorch
reads the file (onto the CPU, with map_location, where it has no CUDA)."""
import io

import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)


def saved(obj, zip_format: bool = True) -> io.BytesIO:
    buf = io.BytesIO()
    minitorch.save(obj, buf, _use_new_zipfile_serialization=zip_format)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("zip_format", [True, False], ids=["zip", "legacy"])
def test_cuda_tensors_load_on_their_device_or_where_map_location_says(zip_format):
    base = minitorch.arange(12.0, device="cuda").reshape(3, 4)
    model = minitorch.nn.Linear(2, 3).to("cuda")
    buf = saved({"base": base, "view": base.t()[1:], "model": model.state_dict()}, zip_format)
    got = minitorch.load(buf)
    assert got["base"].device == base.device and got["view"].tolist() == base.t()[1:].tolist()
    got["base"][2, 1] = -1.0  # still a view of the base's storage, on the device
    assert got["view"][0, 2].item() == -1.0 and got["view"].device == base.device
    assert got["model"]["weight"].device == model.weight.device
    for ml in ("cpu", {"cuda:0": "cpu"}, lambda storage, loc: storage.cpu()):
        buf.seek(0)
        assert minitorch.load(buf, map_location=ml)["base"].device.type == "cpu"
    if minitorch.cuda.device_count() > 1:
        buf.seek(0)
        assert minitorch.load(buf, map_location={"cuda:0": "cuda:1"})["base"].device == minitorch.device("cuda:1")


def test_pytorch_reads_a_cuda_checkpoint():
    torch = pytest.importorskip("torch")
    t = minitorch.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    got = torch.load(saved({"t": t, "row": t[1]}), map_location="cpu")
    assert got["t"].tolist() == t.tolist() and got["row"].tolist() == [3.0, 4.0]
    assert got["row"].untyped_storage().data_ptr() == got["t"].untyped_storage().data_ptr()
