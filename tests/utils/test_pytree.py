"""minitorch.utils._pytree beside torch.utils._pytree: the same trees give the same leaves, key
paths, spec reprs and results, for the built-in containers, namedtuples, return types and a
registered class; and the same errors."""
import collections
import importlib

import pytest

import minitorch

torch = pytest.importorskip("torch")

Point = collections.namedtuple("Point", "x y")


def trees():
    return [
        1,
        None,
        [1, (2, 3.5), {"b": 4, "a": [5, None]}],
        {"k": Point(1, [2, 3]), "z": (), "e": []},
        collections.OrderedDict([("q", 1), ("p", (2,))]),
        collections.defaultdict(int, {"a": 1, "b": [2, 3]}),
        collections.deque([1, [2, 3]], maxlen=5),
        ("s", b"bytes", 7, [8.0, {"x": 9}]),
    ]


def both(fn):
    """fn(pytree module) run with minitorch's and torch's _pytree."""
    return [fn(importlib.import_module(f"{lib}.utils._pytree")) for lib in ("minitorch", "torch")]


def same(fn):
    got, want = both(fn)
    assert got == want


@pytest.mark.parametrize("k", range(len(trees())))
def test_leaves_structure_and_roundtrip(k):
    same(lambda p: p.tree_leaves(trees()[k]))
    same(lambda p: repr(p.tree_structure(trees()[k])))
    same(lambda p: p.treespec_pprint(p.tree_structure(trees()[k])))
    same(lambda p: p.tree_unflatten(*p.tree_flatten(trees()[k])) == trees()[k])
    same(lambda p: list(p.tree_iter(trees()[k])))


@pytest.mark.parametrize("k", range(len(trees())))
def test_flatten_with_path(k):
    def paths(p):
        pairs, spec = p.tree_flatten_with_path(trees()[k])
        return [(p.keystr(kp), leaf) for kp, leaf in pairs], repr(spec)

    same(paths)
    same(lambda p: [(p.keystr(kp), v) for kp, v in p.tree_leaves_with_path(trees()[k])])
    same(lambda p: p.tree_map_with_path(lambda kp, v: p.keystr(kp), trees()[k]))
    # key_get walks a path back to its leaf
    same(lambda p: [p.key_get(trees()[k], kp) == v for kp, v in p.tree_flatten_with_path(trees()[k])[0]])


def test_key_reprs():
    same(lambda p: [repr(k) for kp, _ in p.tree_leaves_with_path({"a": [Point(1, 2)]}) for k in kp])


@pytest.mark.parametrize("only", [int, (int, float), lambda x: x == 3, str])
def test_map_only(only):
    tree = {"a": 1, "b": "s", "c": [2.0, 3, (None, 4)]}
    same(lambda p: p.tree_map_only(only, lambda x: x * 10, tree))
    same(lambda p: p.tree_map_only(only, lambda x: x, tree, is_leaf=lambda x: isinstance(x, tuple)))
    seen = both(lambda p: (lambda out: (p.tree_map_only_(only, out.append, tree), out)[1])([]))
    assert seen[0] == seen[1]


def test_map_only_refuses_a_non_type():
    for p in both(lambda p: p):
        with pytest.raises(TypeError, match="Argument must be a type, a tuple of types, or a callable."):
            p.tree_map_only(3, lambda x: x, [1])


def test_any_all_and_is_leaf():
    tree = [1, (2, 3), {"a": -1}]
    same(lambda p: [p.tree_any(lambda x: x > 2, tree), p.tree_all(lambda x: x > 0, tree),
                    p.tree_all(lambda x: x > 0, []), p.tree_any(lambda x: True, [])])
    same(lambda p: [p.tree_any_only(int, lambda x: x < 0, tree), p.tree_all_only(str, lambda x: False, tree)])
    same(lambda p: p.tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple)))
    same(lambda p: repr(p.tree_flatten(tree, is_leaf=lambda x: isinstance(x, dict))[1]))
    same(lambda p: [p.tree_is_leaf(x) for x in (1, None, [1], {}, Point(1, 2), "s")])
    same(lambda p: p.tree_map(lambda x: x, tree, is_leaf=lambda x: isinstance(x, tuple)))


def test_return_types_are_nodes():
    def flat(lib):
        p = importlib.import_module(f"{lib.__name__}.utils._pytree")
        r = lib.tensor([[1.0, 5.0, 2.0]]).max(1)
        leaves, spec = p.tree_flatten(r)
        back = p.tree_unflatten([x + 1 for x in leaves], spec)
        return [x.tolist() for x in leaves], type(back).__name__, back.values.tolist(), \
            [p.keystr(kp) for kp, _ in p.tree_flatten_with_path(r)[0]]

    assert flat(minitorch) == flat(torch)


def test_register_pytree_node():
    def run(p):
        class Pair:
            def __init__(self, a, b):
                self.a, self.b = a, b

        class Keyed(Pair):
            pass

        p.register_pytree_node(Pair, lambda x: ([x.a, x.b], "ctx"), lambda v, c: Pair(*v))
        p.register_pytree_node(Keyed, lambda x: ([x.a, x.b], None), lambda v, c: Keyed(*v),
                               flatten_with_keys_fn=lambda x: ([(p.GetAttrKey("a"), x.a),
                                                                (p.GetAttrKey("b"), x.b)], None))
        out = []
        tree = [Pair(1, [2, 3]), Keyed(4, (5,))]
        leaves, spec = p.tree_flatten(tree)
        back = p.tree_map(lambda x: x * 2, tree)
        out.append((leaves, spec.num_leaves, [type(x).__name__ for x in back], back[0].b, back[1].a))
        out.append([(p.keystr(kp), v) for kp, v in p.tree_flatten_with_path(tree[1])[0]])
        for bad in (lambda: p.tree_flatten_with_path(tree),  # Pair has no flatten_with_keys_fn
                    lambda: p.register_pytree_node(Pair, lambda x: ([], None), lambda v, c: None),
                    lambda: p.register_pytree_node(list, lambda x: (x, None), lambda v, c: v),
                    lambda: p.register_pytree_node(type("T", (), {}), lambda x: ([], None), lambda v, c: None,
                                                   to_dumpable_context=lambda c: c)):
            with pytest.raises(ValueError) as e:
                bad()
            out.append(str(e.value).replace(".<locals>", "").split("'")[-1])
        return out

    same(run)


def test_mismatched_rests():
    for p in both(lambda p: p):
        assert p.tree_map(lambda a, b: a + b, [1, {"a": 2}], [10, {"a": 20}]) == [11, {"a": 22}]
        with pytest.raises(ValueError):
            p.tree_map(lambda a, b: a + b, [1, 2], [10, 20, 30])
