"""python -m minitorch: the seed network, y = model(x), and the path the call took."""
import minitorch
from minitorch import nn
from minitorch._journey import format_tree, record


def main() -> None:
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    x = minitorch.randn(1, 4)
    model(x)  # warm-up: first calls pay for lazy initialisation in OpenBLAS
    y, events = record(model, x)

    print("model:", model, sep="\n")
    print("\ninput x:", x, sep="\n")
    print("\noutput y = model(x):", y, sep="\n")
    print("\nThe journey of y = model(x) (Python -> Op [dispatch key] -> Kernel -> Library):\n")
    print(format_tree(events))
    kernels = sorted({e.name for e in events if e.layer in ("Kernel", "Library")})
    print(f"\n{sum(e.layer == 'Op' for e in events)} ops dispatched; kernels and library calls: {', '.join(kernels)}")
    print("Every op above went through minitorch._C's dispatcher; "
          "minitorch._C._dispatch_table('addmm') shows its kernels:", minitorch._C._dispatch_table("addmm"))


if __name__ == "__main__":
    main()
