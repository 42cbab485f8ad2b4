"""examples/journey.ipynb runs top to bottom in a fresh ipykernel (nbclient), with this checkout's minitorch.

The kernel is started from a kernelspec written here: this interpreter (sys.executable), PYTHONPATH
set to the repository root, and the cwd a temporary directory, so the notebook imports the minitorch
under test, not one installed elsewhere.
"""
import json
import os
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402  (installed with nbclient)
from jupyter_client.manager import KernelManager  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "journey.ipynb"


def kernel_manager(tmp: Path) -> KernelManager:
    spec = tmp / "kernels" / "python3"
    spec.mkdir(parents=True)
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "minitorch tests", "language": "python", "env": env}))
    return KernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec.parent)]))


def outputs(cell, kind):
    return [o for o in cell.get("outputs", []) if o["output_type"] == kind]


def test_committed_notebook_has_no_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")


def test_journey_notebook_runs_top_to_bottom(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # a last cell, not in the file, says which interpreter and which minitorch the kernel used
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable); print(minitorch.__file__)"))
    client = nbclient.NotebookClient(nb, km=kernel_manager(tmp_path), timeout=120,
                                     resources={"metadata": {"path": str(tmp_path)}})
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    assert seconds < 60, f"the notebook took {seconds:.1f} s"

    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not outputs(c, "error") for c in code)
    executable, module_file = outputs(code[-1], "stream")[0]["text"].split()
    assert Path(executable).resolve() == Path(sys.executable).resolve()
    assert Path(module_file).resolve() == ROOT / "minitorch" / "__init__.py"

    html = [o["data"]["text/html"] for c in code for o in outputs(c, "display_data") + outputs(c, "execute_result")
            if "text/html" in o["data"]]
    svg = [o["data"]["image/svg+xml"] for c in code for o in outputs(c, "execute_result")
           if "image/svg+xml" in o["data"]]
    joined = "\n".join(html)
    assert 'class="minitorch-module mt-html"' in joined and 'class="minitorch-tensor mt-html"' in joined
    assert "Library::cblas_sgemv" in joined and "Self CPU time total" in joined  # journey, key_averages
    assert any("AddmmBackward0" in s and "0.weight" in s for s in svg) and any("addmm" in s for s in svg)
    last_gpu = outputs(code[-2], "stream")
    gpu = "".join(o["text"] for o in last_gpu)
    import minitorch
    if minitorch.cuda.is_available():
        assert "Runtime::" in joined or "cuda" in joined
    else:
        assert gpu.startswith("CUDA not available: ")
