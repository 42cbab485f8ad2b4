"""The "Performance Tuning Guide" recipe's CPU snippets as scripts copy them: DataLoader with
num_workers and pin_memory (pinned only where a GPU is), torch.backends.cudnn.benchmark = True,
model.zero_grad(set_to_none=True) and optimizer.zero_grad(set_to_none=True), a gelu fused by
@torch.compile (x * 0.5 * (1.0 + torch.erf(x / 1.41421))), bias=False on a convolution followed by
BatchNorm, torch.set_flush_denormal(True), the debugging APIs switched off
(torch.autograd.set_detect_anomaly(False), torch.autograd.profiler.profile(enabled=False),
torch.autograd.profiler.emit_nvtx(enabled=False)), torch.set_float32_matmul_precision('high'),
torch.autocast(device_type='cpu', dtype=torch.bfloat16) for inference, oneDNN Graph through
TorchScript (torch.jit.enable_onednn_fusion(True), torch.jit.trace of the eval model under
no_grad, torch.jit.freeze, two warm-up calls), torch.jit.optimize_for_inference, with
torch.jit.fuser("fuser2") and inference_mode; the model trained a few steps under those
settings and its inference outputs compared."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def tuning_guide(torch, init=None, steps=3):
    import warnings

    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(0)
    data = torch.tensor(rng.standard_normal((12, 3, 8, 8)), dtype=torch.float32)
    targets = torch.tensor(rng.integers(0, 4, 12))
    result = {}

    torch.backends.cudnn.benchmark = True
    torch.set_float32_matmul_precision('high')
    flush = torch.set_flush_denormal(True)
    torch.autograd.set_detect_anomaly(False)
    torch.autograd.profiler.profile(enabled=False)
    torch.autograd.profiler.emit_nvtx(enabled=False)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @torch.compile
        def gelu(x):
            return x * 0.5 * (1.0 + torch.erf(x / 1.41421))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3, bias=False)  # bias is redundant before a BatchNorm
                self.bn = nn.BatchNorm2d(8)
                self.fc = nn.Linear(8 * 6 * 6, 4)

            def forward(self, x):
                x = F.gelu(self.bn(self.conv(x)))
                return self.fc(torch.flatten(x, 1))

        probe = torch.tensor(rng.standard_normal(64), dtype=torch.float32)
        result["fused_gelu"] = {"out": numpy_of(gelu(probe)),
                                "close": bool(torch.allclose(gelu(probe), F.gelu(probe), atol=1e-4))}
        torch.manual_seed(0)
        model = Net()
        start_from(torch, model, init, result)
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data, targets), batch_size=4,
                                             num_workers=2, pin_memory=torch.cuda.is_available())
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        losses = []
        for _ in range(steps):
            for x, y in loader:
                model.zero_grad(set_to_none=True)
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                losses.append(loss.item())
        result.update(losses=losses, grads_none=[p.grad is None for p in model.parameters()])

        model.eval()
        with torch.autocast(device_type='cpu', dtype=torch.bfloat16), torch.no_grad():
            amp_out = model(data)
        result["autocast"] = {"dtype": str(amp_out.dtype).split(".")[-1], "out": numpy_of(amp_out.float())}

        torch.jit.enable_onednn_fusion(True)
        sample_input = [data[:4]]
        with torch.no_grad():
            traced_model = torch.jit.trace(model, sample_input)
            traced_model = torch.jit.freeze(traced_model)
            # a couple of warm-up runs
            traced_model(*sample_input)
            traced_model(*sample_input)
            result["onednn"] = {"enabled": torch.jit.onednn_fusion_enabled(), "out": numpy_of(traced_model(data))}
        torch.jit.enable_onednn_fusion(False)
        frozen = torch.jit.optimize_for_inference(torch.jit.script(model))
        with torch.jit.fuser("fuser2"), torch.inference_mode():
            result["optimized"] = numpy_of(frozen(data))
        try:
            torch.jit.freeze(torch.jit.script(Net()))
            result["freeze_train"] = "froze"
        except RuntimeError as e:
            result["freeze_train"] = str(e)
    torch.set_flush_denormal(False)
    torch.backends.cudnn.benchmark = False
    torch.set_float32_matmul_precision('highest')
    result["own"] = {"flush": flush}
    return result


def test_performance_tuning_guide():
    compare_program(tuning_guide, rtol=2e-4, atol=2e-4)
