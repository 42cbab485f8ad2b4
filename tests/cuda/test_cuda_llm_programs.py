"""Published LLM and speech programs of tests/programs run on the (emulated) CUDA device under
minitorch and on the CPU under PyTorch, with the same weights: their rotary embeddings
(view_as_complex, polar, a complex product), kv caches and sampling, and whisper's log-mel front
end (torch.stft), all of which put complex tensors on the device (csrc/dispatch/complex.c). The
results must match PyTorch's within the programs' own tolerances; what names the device (a
parameter's device) is left out of the comparison."""
import sys
from pathlib import Path

import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "programs"))

from prog_helpers import assert_same_results, run_both  # noqa: E402

pytest.importorskip("torch")
ON_CUDA = {"device": "cuda"}


def compare_on_cuda(program, *, rtol=2e-4, atol=2e-5, drop=(), **options):
    ref, got = run_both(program, ON_CUDA, **options)
    for key in drop:
        ref.pop(key), got.pop(key)
    assert_same_results(got, ref, rtol=rtol, atol=atol)
    return ref, got


def test_nano_llama31_on_cuda(tmp_path):
    import test_nano_llama31 as prog

    prog.write_checkpoint(tmp_path / "ckpt")
    compare_on_cuda(prog.llama31_program, rtol=1e-3, atol=1e-3, ckpt_dir=tmp_path / "ckpt")


@pytest.mark.parametrize("variant", ["gemma1-quant", "gemma3"])
def test_gemma_on_cuda(tmp_path, variant):
    import test_gemma_pytorch as prog

    prog.write_checkpoint(tmp_path / "model.ckpt", variant)
    compare_on_cuda(prog.gemma_program, variant=variant, ckpt=tmp_path / "model.ckpt")


def test_mixtral_moe_on_cuda(tmp_path):
    import test_mixtral_moe_one_file_ref as prog

    prog.write_folder(tmp_path / "mixtral")
    compare_on_cuda(prog.moe_program, drop=("devices",), model_path=tmp_path / "mixtral", dtype="float32")


def test_whisper_log_mel_and_alignment_on_cuda():
    import test_whisper_model as prog

    compare_on_cuda(prog.whisper_audio_program, rtol=1e-4, atol=1e-4)
