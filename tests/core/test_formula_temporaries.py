"""One op, one place (issue 18, point 3): the backward formulas manage their temporaries one way.

Every intermediate tensor a formula makes is adopted by one scratch list (`tmp s`, ops/op_chain.h)
right after the call that made it, and the list releases them all once, at each return of the
function that declared it (`return finish(&s);`). Checked from the source of the formula files:
the retired ways (a hand-written mt_tensor_clear per temporary, mt_temps slots with a labelled
exit, SCRATCH arrays and release_all) must not come back."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AUTOGRAD = ROOT / "csrc" / "autograd"
FILES = sorted(AUTOGRAD.glob("formulas*.c")) + [AUTOGRAD / "helpers.c"]

# Functions in the formula files that release tensors which are not a formula's temporaries.
NOT_FORMULAS = {
    "indices_free": "frees a node's state (the index tensors index and index_put_ nodes keep)",
    "record_indexing": "an Autograd kernel: releases the node it records, and its output on failure",
}

# The ways of managing temporaries the formulas no longer use.
RETIRED = {
    "mt_tensor_clear(": "a temporary released by hand",
    "mt_tensor_release(": "a temporary released by hand",
    "goto ": "a labelled exit that releases temporaries",
    "mt_temps": "ops/temps.h's slots",
    "mt_temp(": "ops/temps.h's slots",
    "ops/temps.h": "ops/temps.h's slots",
    "release_all": "an array of temporaries released by hand",
    "SCRATCH": "an array of temporaries released by hand",
}

DEFINITION = re.compile(r"^(?:static )?(?:inline )?[\w \*]+\n(\w+)\(([^)]*)\)\n\{\n(.*?)^\}\n",
                        re.S | re.M)


def strip_comments(source):
    """source without its comments and string literals (an error message may say "goto")."""
    code = r'("(?:[^"\\\n]|\\.)*")|/\*.*?\*/|//[^\n]*'
    return re.sub(code, lambda m: '""' if m.group(1) else " ", source, flags=re.S)


def functions():
    """(file name, function name, parameters, body) of every function the formula files define."""
    found = []
    for path in FILES:
        for m in DEFINITION.finditer(strip_comments(path.read_text())):
            found.append((path.name, m.group(1), m.group(2), m.group(3)))
    return found


def test_the_parser_finds_the_formulas():
    names = {name for _, name, _, _ in functions()}
    assert len(FILES) >= 10
    assert len(names) > 300
    for name in ("mt_grad_mul", "mt_grad__linalg_svd", "mt_grad_scatter_reduce", "mt_ag_sum_to",
                 "mt_grad_binary_cross_entropy_with_logits", *NOT_FORMULAS):
        assert name in names


def test_no_formula_manages_temporaries_another_way():
    offences = []
    for file, name, _, body in functions():
        if name in NOT_FORMULAS:
            continue
        for token, what in RETIRED.items():
            if token in body:
                offences.append(f"{file}: {name} uses {token.strip()} ({what})")
    for path in FILES:
        text = strip_comments(path.read_text())
        for token in ("ops/temps.h", "SCRATCH", "release_all"):
            if token in text:
                offences.append(f"{path.name} has {token}")
    assert not offences, "\n".join(offences)


def finishing_helpers():
    """The helpers that end their caller's chain (formula_chain.h's chain(), and those of the
    formula files that take a `tmp *` and finish it): a formula may return through them."""
    names = {"chain"}
    for _, name, params, body in functions():
        given = re.search(r"\btmp \*(\w+)", params)
        if given and re.search(rf"\bfinish\({given.group(1)}\)", body):
            names.add(name)
    return names


def test_every_scratch_list_is_finished_at_every_return():
    offences, lists = [], 0
    ends = "|".join(sorted(finishing_helpers()))
    for file, name, _, body in functions():
        declared = re.search(r"\btmp (\w+) = \{0\};", body)
        if declared is None:
            continue
        lists += 1
        s = declared.group(1)
        assert len(re.findall(r"\btmp \w+ = \{0\};", body)) == 1, f"{name}: two scratch lists"
        after = body[declared.end():]
        finished = rf"return (finish|{ends})\(&{s}\b"
        for ret in re.findall(r"\breturn\b[^;]*;", after):
            if not re.match(finished, ret):
                offences.append(f"{file}: {name}: {ret!r} leaves {s}'s temporaries unreleased")
        if not re.search(finished, after):
            offences.append(f"{file}: {name} never finishes {s}")
    assert lists > 120
    assert not offences, "\n".join(offences)


def test_helpers_given_a_list_finish_it_only_as_their_callers_last_step():
    """A helper given the caller's list either returns a step's result and leaves the list alone,
    or ends the caller's chain: it returns the list's status (every return is finish()), and
    its callers return what it returns."""
    offences = []
    helpers = finishing_helpers() - {"chain"}
    assert helpers, "no formula helper ends its caller's chain: the check below checks nothing"
    for file, name, params, body in functions():
        given = re.search(r"\btmp \*(\w+)", params)
        if name in helpers:
            for ret in re.findall(r"\breturn\b[^;]*;", body):
                if not ret.startswith(f"return finish({given.group(1)})"):
                    offences.append(f"{file}: {name}: {ret!r} does not finish the caller's list")
        for helper in helpers:
            for call in re.finditer(rf"\b{helper}\(", body):
                if not body[: call.start()].rstrip().endswith("return"):
                    offences.append(f"{file}: {name} calls {helper} and goes on after it")
    assert not offences, "\n".join(offences)


def test_the_retired_patterns_are_recognised():
    """The checks above would see each retired way if it came back."""
    hand = "mt_status\nf(mt_tensor *x)\n{\n    mt_tensor *t = NULL;\n    mt_tensor_clear(&t);\n" \
           "    return MT_OK;\n}\n"
    m = DEFINITION.search(strip_comments(hand))
    assert m and "mt_tensor_clear(" in m.group(3)
    early = "mt_status\nf(mt_tensor *x)\n{\n    tmp s = {0};\n    if (x) {\n        return MT_OK;\n" \
            "    }\n    return finish(&s);\n}\n"
    body = DEFINITION.search(early).group(3)
    rets = re.findall(r"\breturn\b[^;]*;", body[body.index("tmp s"):])
    assert [r for r in rets if not r.startswith("return finish(&s")] == ["return MT_OK;"]


def test_the_slots_of_temps_h_are_gone_everywhere():
    """ops/temps.h (mt_temps, whose mt_temp reused its last slot when full) is gone: the
    composites that chained ops through it use the op chain as the formulas do."""
    assert not (ROOT / "csrc" / "ops" / "temps.h").exists()
    users = [str(p.relative_to(ROOT)) for p in sorted(ROOT.glob("csrc/**/*.[ch]"))
             + sorted(ROOT.glob("cuda/*.[ch]"))
             if re.search(r"\bmt_temps?\b|ops/temps\.h", strip_comments(p.read_text()))]
    assert not users, f"files still using ops/temps.h's slots: {users}"
    assert re.search(r"\bmt_temps?\b", "mt_temps p = {0}; mt_tensor **x = mt_temp(&p);")
