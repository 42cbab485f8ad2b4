"""An optimizer's state between its own form (parameters numbered, FSDP's shards) and the full
form keyed by the original parameters' names (what FSDP.optim_state_dict and
distributed.checkpoint.state_dict's get_state_dict give): a shard's per-element state (Adam's
exp_avg) is gathered and split into the original parameters; its scalars (step) are copied."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import minitorch
from minitorch import nn


def _owners(model: nn.Module) -> Dict[int, Tuple[Any, Any, List[str]]]:
    """id(optimized parameter) -> (handle or None, piece index or None, original names)."""
    from minitorch.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel, _clean

    owners: Dict[int, Tuple[Any, Any, List[str]]] = {}
    for name, m in model.named_modules():  # fully_shard's parameters are their own (DTensors)
        h = m._handle if isinstance(m, FullyShardedDataParallel) else None
        if h is not None:
            prefix = _clean(name) + "." if _clean(name) else ""
            fqns = [prefix + i.fqn for i in h.infos]
            if h.flat_param is not None:
                owners[id(h.flat_param)] = (h, None, fqns)
            else:
                for k, piece in enumerate(h.pieces):
                    owners[id(piece)] = (h, k, [fqns[k]])
    for name, p in model.named_parameters():
        owners.setdefault(id(p), (None, None, [name]))
    return owners


def _numbered(optim) -> List[Any]:
    return [p for g in optim.param_groups for p in g["params"]]


def full_optim_state_dict(model: nn.Module, optim, osd: Dict[str, Any] = None) -> Dict[str, Any]:
    """{"state": {name: {key: value}}, "param_groups": [{..., "params": [names]}]} (every rank
    calls it: the shards' state is all-gathered)."""
    osd = optim.state_dict() if osd is None else osd
    owners = _owners(model)
    params = _numbered(optim)
    index = {id(p): i for i, p in enumerate(params)}
    state: Dict[str, Dict[str, Any]] = {}
    done = set()
    for i, p in enumerate(params):
        h, k, fqns = owners[id(p)]
        if h is None:
            if i in osd["state"]:
                state[fqns[0]] = dict(osd["state"][i])
            continue
        if id(h) in done:
            continue
        done.add(id(h))
        every = [f for q in h.shard_params() for f in owners[id(q)][2]]  # the handle's names, in order
        state.update(_gathered(h, [osd["state"].get(index.get(id(q))) for q in h.shard_params()], every))
    groups = []
    for g in osd["param_groups"]:
        names = [n for i in g["params"] for n in owners[id(params[i])][2]]
        groups.append({**{key: v for key, v in g.items() if key != "params"}, "params": names})
    order = [n for g in groups for n in g["params"] if n in state]  # the optimizer's order, as PyTorch's
    return {"state": {n: state[n] for n in order}, "param_groups": groups}


def _gathered(h, states: List[Any], fqns: List[str]) -> Dict[str, Dict[str, Any]]:
    """The full state of a handle's parameters from its shard params' states (one per shard param:
    the flat parameter, or each piece)."""
    present = [s for s in states if s]
    if not present:
        return {}
    out: Dict[str, Dict[str, Any]] = {f: {} for f in fqns}
    for key in sorted(present[0]):
        ref = present[0][key]
        if isinstance(ref, minitorch.Tensor) and ref.dim() >= 1:
            if h.flat_param is not None:
                local = ref
            else:
                parts = [s[key] if s else minitorch.zeros_like(q) for s, q in zip(states, h.pieces)]
                local = minitorch.cat([*[t.reshape(-1) for t in parts], h.padding().to(ref.dtype)])
            full = h.gather_full(local)
            for f, info in zip(fqns, h.infos):
                out[f][key] = full[info.offset:info.offset + info.numel].view(info.shape).clone()
        else:
            for f in fqns:
                out[f][key] = ref.clone() if isinstance(ref, minitorch.Tensor) else ref
    return out


def sharded_optim_state_dict(model: nn.Module, optim, full: Dict[str, Any]) -> Dict[str, Any]:
    """optim's own state_dict (numbered, this rank's shards) from the full form."""
    owners = _owners(model)
    params = _numbered(optim)
    state: Dict[int, Dict[str, Any]] = {}
    for i, p in enumerate(params):
        h, k, fqns = owners[id(p)]
        given = [full["state"].get(f) for f in fqns]
        if not any(given):
            continue
        if h is None:
            state[i] = dict(given[0])
            continue
        entry = {}
        for key, ref in given[0].items():
            if isinstance(ref, minitorch.Tensor) and ref.dim() >= 1:
                if k is None:
                    flat = minitorch.cat([g[key].reshape(-1) for g in given] +
                                         [minitorch.zeros(h.shard_numel * (h.pg.size() if h.sharded else 1) - h.numel,
                                                          dtype=ref.dtype, device=ref.device)])
                    entry[key] = flat[h.start:h.start + h.shard_numel].clone()
                else:
                    info = h.infos[k]
                    lo, hi = h._overlap(info)
                    entry[key] = ref.reshape(-1)[lo - info.offset:hi - info.offset].clone()
            else:
                entry[key] = ref.clone() if isinstance(ref, minitorch.Tensor) else ref
        state[i] = entry
    mine = optim.state_dict()["param_groups"]
    groups = [{**{key: v for key, v in g.items() if key != "params"}, "params": own["params"]}
              for g, own in zip(full["param_groups"], mine)]
    return {"state": state, "param_groups": groups}
