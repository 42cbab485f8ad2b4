"""The "Extending PyTorch" notes' examples as written: LinearFunction (ctx.save_for_backward,
ctx.needs_input_grad, grad_output.mm(weight), the bias gradient by sum(0)) with the combined
forward(ctx, ...) and the separate setup_context(ctx, inputs, output) styles, checked by
gradcheck in double precision; MulConstant (a non-tensor argument, ctx.constant, None for its
gradient); a Function
using ctx.set_materialize_grads(False) and testing for None gradients; @once_differentiable on a
backward; the MyLinear module (nn.Parameter(torch.empty(...)), uniform_(-0.1, 0.1), the Function in
forward, extra_repr) trained a few SGD steps against nn.Linear from the same weights."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def extending_notes(torch, init=None, steps=3):
    nn = torch.nn
    Function = torch.autograd.Function
    once_differentiable = __import__(torch.__name__ + ".autograd.function", fromlist=["x"]).once_differentiable
    from_numpy = torch.from_numpy
    rng = np.random.default_rng(0)
    result = {}

    # Inherit from Function
    class LinearFunction(Function):

        # Note that forward, setup_context, and backward are @staticmethods
        @staticmethod
        def forward(input, weight, bias):
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        # inputs is a Tuple of all of the inputs passed to forward.
        # output is the output of the forward().
        def setup_context(ctx, inputs, output):
            input, weight, bias = inputs
            ctx.save_for_backward(input, weight, bias)

        # This function has only a single output, so it gets only one gradient
        @staticmethod
        def backward(ctx, grad_output):
            # This is a pattern that is very convenient - at the top of backward
            # unpack saved_tensors and initialize all gradients w.r.t. inputs to
            # None. Thanks to the fact that additional trailing Nones are
            # ignored, the return statement is simple even when the function has
            # optional inputs.
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None

            # These needs_input_grad checks are optional and there only to
            # improve efficiency. If you want to make your code simpler, you can
            # skip them. Returning gradients for inputs that don't require it is
            # not an error.
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)

            return grad_input, grad_weight, grad_bias

    class LinearFunctionCombined(Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        backward = LinearFunction.backward  # the same backward as above

    class MulConstant(Function):
        @staticmethod
        def forward(tensor, constant):
            return tensor * constant

        @staticmethod
        def setup_context(ctx, inputs, output):
            # ctx is a context object that can be used to stash information
            # for backward computation
            tensor, constant = inputs
            ctx.constant = constant

        @staticmethod
        def backward(ctx, grad_output):
            # We return as many input gradients as there were arguments.
            # Gradients of non-Tensor arguments to forward must be None.
            return grad_output * ctx.constant, None

    def double(*shape, requires_grad=True):
        return torch.tensor(rng.standard_normal(shape), dtype=torch.double, requires_grad=requires_grad)

    gradcheck = torch.autograd.gradcheck
    # gradcheck takes a tuple of tensors as input, check if your gradient
    # evaluated with these tensors are close enough to numerical
    # approximations and returns True if they all verify this condition.
    input = (double(20, 20), double(30, 20), double(30))
    result["gradcheck"] = [gradcheck(LinearFunction.apply, input, eps=1e-6, atol=1e-4),
                           gradcheck(LinearFunctionCombined.apply, input, eps=1e-6, atol=1e-4),
                           gradcheck(lambda t: MulConstant.apply(t, 2.5), (double(3, 4),))]
    x = double(4, 3)
    y = MulConstant.apply(x, 3.0)
    y.sum().backward()
    result["mul_constant"] = numpy_of(x.grad)

    class SimpleFunc(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x.clone(), x.clone()

        @staticmethod
        @once_differentiable
        def backward(ctx, g1, g2):  # g1 and g2 may be None: materialize_grads is off
            x, = ctx.saved_tensors
            grad_input = torch.zeros_like(x)
            if g1 is not None:  # We must check for None now
                grad_input += g1
            if g2 is not None:
                grad_input += g2
            return grad_input

    a = double(3)
    out1, out2 = SimpleFunc.apply(a)
    (out1 * 2).sum().backward()
    result["materialize"] = numpy_of(a.grad)
    b = double(3)
    o1, o2 = SimpleFunc.apply(b)
    once = o1.sum() + (o2 * 3).sum()
    g, = torch.autograd.grad(once, b, create_graph=True)
    try:
        g.sum().backward()
        result["once_differentiable"] = "ran"
    except RuntimeError as e:
        result["once_differentiable"] = str(e).split("\n")[0]

    class MyLinear(nn.Module):
        def __init__(self, input_features, output_features, bias=True):
            super().__init__()
            self.input_features = input_features
            self.output_features = output_features

            # nn.Parameter is a special kind of Tensor, that will get
            # automatically registered as Module's parameter once it's assigned
            # as an attribute. Parameters and buffers need to be registered, or
            # they won't appear in .parameters() (doesn't apply to buffers), and
            # won't be converted when e.g. .cuda() is called. You can use
            # .register_buffer() to register buffers.
            # nn.Parameters require gradients by default.
            self.weight = nn.Parameter(torch.empty(output_features, input_features))
            if bias:
                self.bias = nn.Parameter(torch.empty(output_features))
            else:
                # You should always register all possible parameters, but the
                # optional ones can be None if you want.
                self.register_parameter('bias', None)

            # Not a very smart way to initialize weights
            nn.init.uniform_(self.weight, -0.1, 0.1)
            if self.bias is not None:
                nn.init.uniform_(self.bias, -0.1, 0.1)

        def forward(self, input):
            # See the autograd section for explanation of what happens here.
            return LinearFunction.apply(input, self.weight, self.bias)

        def extra_repr(self):
            # (Optional)Set the extra information about this module. You can test
            # it by printing an object of this class.
            return 'input_features={}, output_features={}, bias={}'.format(
                self.input_features, self.output_features, self.bias is not None
            )

    torch.manual_seed(0)
    mine = MyLinear(6, 3)
    ref = nn.Linear(6, 3)
    start_from(torch, mine, init, result)
    ref.load_state_dict(mine.state_dict())
    result["repr"] = repr(mine)
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (mine, ref)]
    data = from_numpy(rng.standard_normal((8, 6)).astype(np.float32))
    target = from_numpy(rng.standard_normal((8, 3)).astype(np.float32))
    losses = []
    for _ in range(steps):
        for m, opt in zip((mine, ref), opts):
            opt.zero_grad()
            loss = nn.functional.mse_loss(m(data), target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    result.update(losses=losses, same=bool(torch.allclose(mine.weight, ref.weight, atol=1e-6)),
                  weight=numpy_of(mine.weight))
    return result


def test_extending_pytorch_notes():
    compare_program(extending_notes)
