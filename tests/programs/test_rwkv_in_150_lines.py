"""BlinkDL's RWKV_in_150_lines.py (ChatRWKV): RWKV-4 inference as an RNN, on a tiny random
checkpoint that PyTorch writes with torch.save in bfloat16 (as the published .pth files are) and
both libraries read with torch.load(map_location='cpu'): the weights squeezed, time_decay turned
into -torch.exp(w.float()), the rest .float(), then set into nested types.SimpleNamespace objects
and a dict of blocks; RWKV_RNN is a torch.jit.ScriptModule whose time_mixing and channel_mixing are
@torch.jit.script_method, the state one (5 * n_layer, n_embd) tensor written row by row in place
(state[5*i+1] = x), torch.maximum for the numerically safe WKV, torch.square(torch.relu(...)),
F.layer_norm with the namespace's weight and bias, embeddings by self.w.emb.weight[token]; the
context fed token by token, then trials from cloned states sampled by sample_logits (top-p in
NumPy over F.softmax(out).numpy(), np.random.choice), all under torch.autograd.profiler.profile
(enabled=False) as the script runs."""
import types

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of

N_LAYER, N_EMBD, N_VOCAB = 2, 16, 50


def rwkv_program(torch, init=None, model_name=None):
    F = torch.nn.functional
    np.random.seed(0)
    torch.manual_seed(1)

    args = types.SimpleNamespace()
    args.MODEL_NAME = str(model_name)
    args.n_layer = N_LAYER
    args.n_embd = N_EMBD

    context = [3, 17, 5, 9, 22, 41, 8]
    NUM_TRIALS = 2
    LENGTH_PER_TRIAL = 6
    TEMPERATURE = 1.0
    TOP_P = 0.85

    class RWKV_RNN(torch.jit.ScriptModule):
        def __init__(self, args):
            super().__init__()
            self.args = args
            self.eval() # set torch to inference mode

            w = torch.load(args.MODEL_NAME + '.pth', map_location='cpu')
            for k in w.keys():
                if      '.time_' in k: w[k] = w[k].squeeze()
                if '.time_decay' in k: w[k] = -torch.exp(w[k].float()) # the real time decay is like e^{-e^x}
                else: w[k] = w[k].float() # convert to f32 type

            self.w = types.SimpleNamespace() # set self.w from w
            self.w.blocks = {}
            for k in w.keys(): # example: "blocks.0.att.time_first" => self.w.blocks[0].att.time_first
                parts = k.split('.')
                last = parts.pop()
                here = self.w
                for p in parts:
                    if p.isdigit():
                        p = int(p)
                        if p not in here: here[p] = types.SimpleNamespace()
                        here = here[p]
                    else:
                        if not hasattr(here, p): setattr(here, p, types.SimpleNamespace())
                        here = getattr(here, p)
                setattr(here, last, w[k])

        def layer_norm(self, x, w):
            return F.layer_norm(x, (self.args.n_embd,), weight=w.weight, bias=w.bias)

        @torch.jit.script_method
        def channel_mixing(self, x, state, i:int, time_mix_k, time_mix_r, kw, vw, rw):
            xk = x * time_mix_k + state[5*i+0] * (1 - time_mix_k)
            xr = x * time_mix_r + state[5*i+0] * (1 - time_mix_r)
            state[5*i+0] = x
            r = torch.sigmoid(rw @ xr)
            k = torch.square(torch.relu(kw @ xk)) # square relu, primer paper
            return r * (vw @ k)

        @torch.jit.script_method
        def time_mixing(self, x, state, i:int, time_mix_k, time_mix_v, time_mix_r, time_first, time_decay, kw, vw, rw, ow):
            xk = x * time_mix_k + state[5*i+1] * (1 - time_mix_k)
            xv = x * time_mix_v + state[5*i+1] * (1 - time_mix_v)
            xr = x * time_mix_r + state[5*i+1] * (1 - time_mix_r)
            state[5*i+1] = x
            r = torch.sigmoid(rw @ xr)
            k = kw @ xk
            v = vw @ xv

            aa = state[5*i+2]
            bb = state[5*i+3]
            pp = state[5*i+4]
            ww = time_first + k
            qq = torch.maximum(pp, ww)
            e1 = torch.exp(pp - qq)
            e2 = torch.exp(ww - qq)
            a = e1 * aa + e2 * v
            b = e1 * bb + e2
            wkv = a / b
            ww = pp + time_decay
            qq = torch.maximum(ww, k)
            e1 = torch.exp(ww - qq)
            e2 = torch.exp(k - qq)
            state[5*i+2] = e1 * aa + e2 * v
            state[5*i+3] = e1 * bb + e2
            state[5*i+4] = qq
            return ow @ (r * wkv)

        def forward(self, token, state):
            with torch.no_grad():
                if state == None:
                    state = torch.zeros(self.args.n_layer * 5, self.args.n_embd)
                    for i in range(self.args.n_layer): state[5*i+4] = -1e30 # -infinity

                x = self.w.emb.weight[token]
                x = self.layer_norm(x, self.w.blocks[0].ln0)
                for i in range(self.args.n_layer):
                    att = self.w.blocks[i].att
                    x = x + self.time_mixing(self.layer_norm(x, self.w.blocks[i].ln1), state, i,
                        att.time_mix_k, att.time_mix_v, att.time_mix_r, att.time_first, att.time_decay,
                        att.key.weight, att.value.weight, att.receptance.weight, att.output.weight)
                    ffn = self.w.blocks[i].ffn
                    x = x + self.channel_mixing(self.layer_norm(x, self.w.blocks[i].ln2), state, i,
                        ffn.time_mix_k, ffn.time_mix_r,
                        ffn.key.weight, ffn.value.weight, ffn.receptance.weight)

                x = self.w.head.weight @ self.layer_norm(x, self.w.ln_out)
                return x.float(), state

    def sample_logits(out, temperature=1.0, top_p=0.8):
        probs = F.softmax(out, dim=-1).numpy()
        sorted_probs = np.sort(probs)[::-1]
        cumulative_probs = np.cumsum(sorted_probs)
        cutoff = float(sorted_probs[np.argmax(cumulative_probs > top_p)])
        probs[probs < cutoff] = 0
        if temperature != 1.0:
            probs = probs.pow(1.0 / temperature)
        probs = probs / np.sum(probs)
        out = np.random.choice(a=len(probs), p=probs)
        return out

    result = {"trials": [], "outs": []}

    def run():
        model = RWKV_RNN(args)
        result["w"] = sorted(vars(model.w.blocks[1].att))

        init_state = None
        for token in context:
            init_out, init_state = model.forward(token, init_state)
        result["init_out"] = numpy_of(init_out)
        result["init_state"] = numpy_of(init_state)

        for TRIAL in range(NUM_TRIALS):
            all_tokens = []
            out, state = init_out.clone(), init_state.clone()
            for i in range(LENGTH_PER_TRIAL):
                token = sample_logits(out, TEMPERATURE, TOP_P)
                all_tokens += [int(token)]
                out, state = model.forward(token, state)
                result["outs"].append(numpy_of(out))
            result["trials"].append(all_tokens)

    profile = False
    with torch.autograd.profiler.profile(enabled=profile, record_shapes=False) as prof:
        run()
    return result


def write_checkpoint(path):
    """A random RWKV-4 checkpoint with the published key names and shapes, saved by PyTorch in bfloat16."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    C, V = N_EMBD, N_VOCAB

    def t(*shape, scale=0.3):
        return torch.from_numpy((rng.standard_normal(shape) * scale).astype(np.float32)).bfloat16()

    w = {"emb.weight": t(V, C), "blocks.0.ln0.weight": 1 + t(C, scale=0.1), "blocks.0.ln0.bias": t(C, scale=0.1)}
    for i in range(N_LAYER):
        b = f"blocks.{i}."
        for ln in ("ln1", "ln2"):
            w[b + ln + ".weight"] = 1 + t(C, scale=0.1)
            w[b + ln + ".bias"] = t(C, scale=0.1)
        w[b + "att.time_decay"] = t(C, scale=1.0)
        w[b + "att.time_first"] = t(C, scale=1.0)
        for name in ("k", "v", "r"):
            w[b + f"att.time_mix_{name}"] = torch.from_numpy(rng.uniform(0, 1, (1, 1, C)).astype(np.float32)).bfloat16()
        for name in ("key", "value", "receptance", "output"):
            w[b + f"att.{name}.weight"] = t(C, C)
        w[b + "ffn.time_mix_k"] = torch.from_numpy(rng.uniform(0, 1, (1, 1, C)).astype(np.float32)).bfloat16()
        w[b + "ffn.time_mix_r"] = torch.from_numpy(rng.uniform(0, 1, (1, 1, C)).astype(np.float32)).bfloat16()
        w[b + "ffn.key.weight"] = t(4 * C, C)
        w[b + "ffn.receptance.weight"] = t(C, C)
        w[b + "ffn.value.weight"] = t(C, 4 * C)
    w["ln_out.weight"] = 1 + t(C, scale=0.1)
    w["ln_out.bias"] = t(C, scale=0.1)
    w["head.weight"] = t(V, C)
    torch.save(w, str(path) + ".pth")


@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
def test_rwkv_in_150_lines(tmp_path):
    write_checkpoint(tmp_path / "rwkv-4-tiny")
    ref, got = compare_program(rwkv_program, model_name=tmp_path / "rwkv-4-tiny")
    assert ref["trials"] == got["trials"] and len(ref["trials"][0]) == 6
