"""The "Custom Python Operators" tutorial as its page writes it, with NumPy in place of PIL: a
crop op made by @torch.library.custom_op("...::crop", mutates_args=()) with type hints
(Tensor, Sequence[int]) that leaves the library (pic.cpu().numpy()), its register_fake shape
function (pic.new_empty(...).permute(2, 0, 1)), register_autograd with a setup_context that keeps
the box on ctx and a backward that pastes the gradient back by F.pad; numpy_mul with
x.numpy(force=True), register_fake by torch.empty_like and an autograd formula; a mutable
numpy_sin (mutates_args={"output"}, device_types="cpu", np.sin(..., out=...)) called inside a
torch.compile(fullgraph=True) function; torch.library.opcheck over a list of examples; the ops
also called as torch.ops.<namespace>.<name>, and trained through in a small model."""
from typing import Sequence

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

NS = "tutorial_pyops"


def custom_python_ops(torch, init=None, steps=3):
    import warnings

    Tensor = torch.Tensor
    F = torch.nn.functional
    ops = getattr(torch.ops, NS, None)
    if ops is not None and hasattr(ops, "crop"):  # registered by an earlier run in this process
        crop, numpy_mul, numpy_sin = ops.crop, ops.numpy_mul, ops.numpy_sin
    else:
        @torch.library.custom_op(f"{NS}::crop", mutates_args=())
        def crop(pic: Tensor, box: Sequence[int]) -> Tensor:
            x0, y0, x1, y1 = box
            img = pic.cpu().numpy()  # leaves the library, as the PIL version does
            cropped = np.ascontiguousarray(img[:, y0:y1, x0:x1])
            return torch.from_numpy(cropped).to(pic.device, pic.dtype)

        @crop.register_fake
        def _(pic, box):
            channels = pic.shape[0]
            x0, y0, x1, y1 = box
            result = pic.new_empty(y1 - y0, x1 - x0, channels).permute(2, 0, 1)
            return result

        def setup_context(ctx, inputs, output) -> Tensor:
            _, box = inputs
            ctx.box = box
            ctx.size = inputs[0].shape

        def backward(ctx, grad_output):
            x0, y0, x1, y1 = ctx.box
            _, height, width = ctx.size
            result = F.pad(grad_output, (x0, width - x1, y0, height - y1))
            return result, None

        crop.register_autograd(backward, setup_context=setup_context)

        @torch.library.custom_op(f"{NS}::numpy_mul", mutates_args=())
        def numpy_mul(x: Tensor, y: float) -> Tensor:
            x_np = x.numpy(force=True)
            z_np = x_np * y
            return torch.from_numpy(z_np).to(x.device)

        @numpy_mul.register_fake
        def _(x, y):
            return torch.empty_like(x)

        def setup_context_mul(ctx, inputs, output):
            x, y = inputs
            ctx.y = y

        def backward_mul(ctx, grad):
            return grad * ctx.y, None

        numpy_mul.register_autograd(backward_mul, setup_context=setup_context_mul)

        @torch.library.custom_op(f"{NS}::numpy_sin", mutates_args={"output"}, device_types="cpu")
        def numpy_sin(input: Tensor, output: Tensor) -> None:
            assert input.device == output.device
            assert input.device.type == "cpu"
            input_np = input.numpy()
            output_np = output.numpy()
            np.sin(input_np, out=output_np)

    rng = np.random.default_rng(0)
    img = torch.tensor(rng.random((3, 8, 10)), dtype=torch.float32, requires_grad=True)
    cropped = crop(img, (1, 2, 7, 6))
    cropped.sum().backward()
    result = {"cropped": numpy_of(cropped), "crop_shape": tuple(cropped.shape), "crop_grad": numpy_of(img.grad)}
    via_ops = getattr(torch.ops, NS).crop(img.detach(), [0, 0, 4, 4])
    result["via_ops"] = numpy_of(via_ops)

    x = torch.tensor(rng.standard_normal(5), dtype=torch.float32, requires_grad=True)
    z = numpy_mul(x, 3.14)
    z.sum().backward()
    result.update(mul=numpy_of(z), mul_grad=numpy_of(x.grad))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @torch.compile(fullgraph=True)
        def f(x):
            out = torch.empty(3)
            numpy_sin(x, out)
            return out

        xs = torch.tensor(rng.standard_normal(3), dtype=torch.float32)
        y = f(xs)
    result.update(sin=numpy_of(y), sin_close=bool(torch.allclose(y, xs.sin())))

    def sample_inputs(device, *args, requires_grad=False):
        def make_tensor(*size):
            return torch.tensor(rng.standard_normal(size), dtype=torch.float32, device=device,
                                requires_grad=requires_grad)
        return [[make_tensor(3), 3.14], [make_tensor(2, 3), 2.718], [make_tensor(2, 3, 4), 1.0]]

    examples = sample_inputs("cpu") + sample_inputs("cpu", requires_grad=True)
    checked = []
    for example in examples:
        report = torch.library.opcheck(numpy_mul, example)
        checked.append(sorted(report.values()))
    result["opcheck"] = checked

    # train a tiny model whose forward goes through the custom ops
    torch.manual_seed(0)
    model = torch.nn.Linear(12, 2)
    start_from(torch, model, init, result)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    target = torch.tensor(rng.standard_normal((3, 2)), dtype=torch.float32)
    images = torch.tensor(rng.random((3, 8, 10)), dtype=torch.float32)
    losses = []
    for _ in range(steps):
        feats = numpy_mul(crop(images, (2, 2, 6, 5)), 0.5).reshape(3, 12)
        loss = F.mse_loss(model(feats), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    result.update(losses=losses, weight=numpy_of(model.weight))
    return result


def test_custom_python_operators():
    compare_program(custom_python_ops)
