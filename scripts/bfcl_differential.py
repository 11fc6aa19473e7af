#!/usr/bin/env python3
"""Differential of toolward's multi-turn verdicts against BFCL's own checker.

For every BFCL multi-turn entry the ground truth (per user turn, a list of
calls) is perturbed in deterministic, seeded ways: a call dropped, a turn
skipped, a call repeated, an argument changed, two calls swapped, an early
call to a held-out function (miss_func). Each perturbed trajectory is judged
twice:

- by BFCL's multi_turn_checker (bfcl_eval in the BFCL root given), with the
  model's calls written as BFCL's function-calling handlers write them
  (convert_to_function_call: name(k=repr(v),...) from the JSON arguments),
  one list per step, empty steps left out as BFCL's eval runner leaves them;
- by toolward, replaying the same trajectory from a cassette against the
  imported suite's MCP server (which runs BFCL's classes).

Several trajectories of one case run as seeds: the cassette of a case has one
run per seed (`when: {seed: N}`), and the differential config runs the
imported cases with seeds 1..SLOTS. Slot N holds the kind KINDS[N-1] when the
entry allows it, else another kind (manifest.jsonl says which).

    bfcl_differential.py prepare --bfcl-root ROOT --out DIR [--suite SUITE]
    bfcl_differential.py compare --out DIR --results RESULTDIR...

prepare writes DIR/cassettes/<id>.yaml, DIR/manifest.jsonl (one line per
trajectory: case, seed, kind, what changed, the calls, BFCL's verdict) and,
with --suite, DIR/differential.cue; compare reads the runs.jsonl of
toolward runs of that config (one or several, e.g. chunks) and prints the agreement per kind and category
and every disagreement. scripts/bfcl_differential.sh runs all of it.

The ground truth is converted here with Python's ast (positional arguments
named from the method's signature), as the import converts it; with --suite
and PyYAML at hand, prepare checks that the imported goldens are the same.

Python 3 standard library only, plus BFCL's code from ROOT (run, not copied).
"""

import argparse
import ast
import collections
import copy
import importlib
import inspect
import json
import os
import random
import re
import sys
import time

CATEGORIES = ["base", "miss_func", "miss_param", "long_context"]
KINDS = ["drop_call", "skip_turn", "repeat_call", "change_arg", "swap_calls", "early_held_out"]
# The kinds tried, in order, for a slot whose own kind does not apply to an
# entry (early_held_out outside miss_func, swap_calls with one call, ...).
FALLBACK = ["change_arg", "drop_call", "repeat_call", "swap_calls", "skip_turn"]
SLOTS = len(KINDS)
MAX_STEPS = 20  # BFCL's MAXIMUM_STEP_LIMIT: tool-calling steps per user turn
ANSWER = "Done."


# ---------------------------------------------------------------- BFCL side


def load_bfcl(root):
    """Imports BFCL's checker and back-end map from root (holding bfcl_eval/)."""
    if not os.path.isdir(os.path.join(root, "bfcl_eval")):
        sys.exit(f"bfcl_differential: {root} holds no bfcl_eval/ directory")
    sys.path.insert(0, os.path.abspath(root))
    checker = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
    utils = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    config = importlib.import_module("bfcl_eval.constants.executable_backend_config")
    return checker, utils, config


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_entries(root, categories):
    """Returns (entry, ground truth) pairs of the categories, in file order."""
    data = os.path.join(root, "bfcl_eval", "data")
    out = []
    for cat in categories:
        entries = read_jsonl(os.path.join(data, f"BFCL_v4_multi_turn_{cat}.json"))
        answers = {a["id"]: a["ground_truth"] for a in read_jsonl(os.path.join(data, "possible_answer", f"BFCL_v4_multi_turn_{cat}.json"))}
        for e in entries:
            out.append((cat, e, answers[e["id"]]))
    return out


class Signatures:
    """Names positional arguments of ground-truth calls by the method's signature."""

    def __init__(self, config):
        self.config = config
        self.params = {}

    def names(self, classes, func):
        for cls in classes:
            key = (cls, func)
            if key not in self.params:
                klass = getattr(importlib.import_module(self.config.CLASS_FILE_PATH_MAPPING[cls]), cls)
                meth = getattr(klass, func, None)
                self.params[key] = None if meth is None or func.startswith("_") else [
                    p for p in inspect.signature(meth).parameters if p != "self"]
            if self.params[key] is not None:
                return self.params[key]
        raise ValueError(f"no involved class of {classes} has {func}")


def parse_call(text, classes, sigs):
    """A ground-truth call string as {"name", "args"}, JSON-typed (tuples become lists)."""
    node = ast.parse(text, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a call: {text}")
    args = {}
    if node.args:
        names = sigs.names(classes, node.func.id)
        for i, a in enumerate(node.args):
            args[names[i]] = ast.literal_eval(a)
    for k in node.keywords:
        args[k.arg] = ast.literal_eval(k.value)
    return {"name": node.func.id, "args": json.loads(json.dumps(args))}


def bfcl_call(call):
    """The call as BFCL's FC handlers write it (convert_to_function_call)."""
    return call["name"] + "(" + ",".join(f"{k}={v!r}" for k, v in call["args"].items()) + ")"


def run_checker(checker, utils, entry, gt, decoded, model):
    try:
        return checker.multi_turn_checker(decoded, gt, entry, entry["id"].rsplit("_", 1)[0], model)
    finally:
        # The checker keeps its instances in multi_turn_utils' globals, by
        # model name and entry id: drop them, each check starts fresh.
        g = vars(utils)
        for k in [k for k in g if k.startswith(model + "_")]:
            del g[k]


def bfcl_verdict(checker, utils, entry, gt, steps, model):
    """BFCL's multi_turn_checker on the trajectory (steps: per turn, per step,
    calls); when invalid, also the turn it failed at (the checker stops at
    the first failing turn: the shortest prefix of turns that fails)."""
    decoded = [[[bfcl_call(c) for c in step] for step in turn if step] for turn in steps]
    res = run_checker(checker, utils, entry, gt, decoded, model)
    if res.get("valid"):
        return {"valid": True}
    turn = next(t for t in range(len(gt)) if not run_checker(checker, utils, entry, gt[: t + 1], decoded[: t + 1], model).get("valid"))
    return {"valid": False, "error_type": res.get("error_type", ""), "error_message": res.get("error_message", ""), "turn": turn}


# ------------------------------------------------------------ perturbations


def positions(turns):
    return [(t, i) for t, calls in enumerate(turns) for i in range(len(calls))]


def change_value(v, rng):
    """A different value of the same JSON type (an int may become the equal float)."""
    if isinstance(v, bool):
        return not v, "negated"
    if isinstance(v, int):
        if rng.random() < 0.2:
            return float(v), "int written as float"
        return v + rng.choice([1, -1, 10]), "int changed"
    if isinstance(v, float):
        return v + rng.choice([1.0, -0.5, 100.0]), "float changed"
    if isinstance(v, str):
        mode = rng.choice(["suffix", "case", "cut"] if len(v) > 1 else ["suffix", "case"])
        if mode == "suffix":
            return v + "_x", "string suffixed"
        if mode == "case":
            w = v.swapcase() if v.swapcase() != v else v + "X"
            return w, "string case swapped"
        return v[: len(v) // 2], "string cut"
    if isinstance(v, list):
        if len(v) >= 2 and rng.random() < 0.5:
            return v[:-1], "list shortened"
        if v:
            w, how = change_value(v[0], rng)
            return [w] + v[1:], "list element: " + how
        return ["x"], "list extended"
    if isinstance(v, dict):
        if v:
            k = rng.choice(sorted(v))
            w, how = change_value(v[k], rng)
            return dict(v, **{k: w}), f"dict key {k}: " + how
        return {"x": 1}, "dict extended"
    if v is None:
        return "x", "null replaced"
    raise ValueError(f"unexpected value {v!r}")


def perturb(kind, entry, turns, rng):
    """Returns (turns, detail) for kind, or None when kind does not apply."""
    t = copy.deepcopy(turns)
    pos = positions(t)
    if kind == "drop_call":
        ti, ci = rng.choice(pos)
        c = t[ti].pop(ci)
        return t, f"turn {ti}: dropped call {ci} {c['name']}"
    if kind == "skip_turn":
        full = [i for i, calls in enumerate(t) if calls]
        ti = rng.choice(full)
        n = len(t[ti])
        t[ti] = []
        return t, f"turn {ti}: no calls (golden has {n})"
    if kind == "repeat_call":
        ti, ci = rng.choice(pos)
        t[ti].insert(ci + 1, copy.deepcopy(t[ti][ci]))
        return t, f"turn {ti}: call {ci} {t[ti][ci]['name']} made twice"
    if kind == "change_arg":
        cands = [(ti, ci, k) for ti, ci in pos for k in t[ti][ci]["args"]]
        if not cands:
            return None
        ti, ci, k = rng.choice(cands)
        old = t[ti][ci]["args"][k]
        new, how = change_value(old, rng)
        t[ti][ci]["args"][k] = json.loads(json.dumps(new))
        return t, f"turn {ti}: call {ci} {t[ti][ci]['name']} {k}: {how} ({json.dumps(old)[:60]} -> {json.dumps(new)[:60]})"
    if kind == "swap_calls":
        inside = [(ti, i, j) for ti, calls in enumerate(t) for i in range(len(calls)) for j in range(i + 1, len(calls)) if calls[i] != calls[j]]
        if inside:
            ti, i, j = rng.choice(inside)
            t[ti][i], t[ti][j] = t[ti][j], t[ti][i]
            return t, f"turn {ti}: calls {i} {t[ti][j]['name']} and {j} {t[ti][i]['name']} swapped"
        full = [i for i, calls in enumerate(t) if calls]
        pairs = [(a, b) for a, b in zip(full, full[1:]) if t[a][-1] != t[b][0]]
        if not pairs:
            return None
        a, b = rng.choice(pairs)
        t[a][-1], t[b][0] = t[b][0], t[a][-1]
        return t, f"last call of turn {a} and first of turn {b} swapped ({t[b][0]['name']}, {t[a][-1]['name']})"
    if kind == "early_held_out":
        missed = entry.get("missed_function") or {}
        if not missed:
            return None
        h = int(sorted(missed, key=int)[0])
        names = set(missed[str(h)])
        held = [c for c in t[h] if c["name"] in names]
        empty = [i for i in range(h) if not t[i]]
        if not held or not empty:
            return None
        e = empty[-1]
        mode = rng.choice(["moved", "copied", "first turn"])
        if mode == "moved":
            t[e] = copy.deepcopy(held)
            t[h] = [c for c in t[h] if c["name"] not in names]
            return t, f"held-out {sorted(names)} called at turn {e}, before they are offered at turn {h}, and not again"
        if mode == "copied":
            t[e] = copy.deepcopy(held)
            return t, f"held-out {sorted(names)} called at turn {e}, before they are offered at turn {h}, and again at turn {h}"
        t[0] = t[0] + copy.deepcopy(held[:1])
        return t, f"held-out {held[0]['name']} called at the end of turn 0, before it is offered at turn {h}"
    raise ValueError(kind)


def split_steps(turns, rng):
    """Each turn's calls as steps of 1..3 calls (at most MAX_STEPS steps)."""
    out = []
    for calls in turns:
        steps, i = [], 0
        least = -(-len(calls) // MAX_STEPS) if calls else 1
        while i < len(calls):
            n = max(least, rng.choice([1, 1, 2, 3]))
            steps.append(calls[i : i + n])
            i += n
        out.append(steps)
    return out


def trajectories(entry, turns, seed):
    """The SLOTS perturbed trajectories of one entry: (slot, kind, detail, steps)."""
    out, used = [], collections.Counter()
    for slot, kind in enumerate(KINDS, start=1):
        for k in [kind] + [f for f in FALLBACK if f != kind]:
            rng = random.Random(f"{seed}/{entry['id']}/{k}/{used[k]}")
            got = perturb(k, entry, turns, rng)
            if got is not None:
                used[k] += 1
                t, detail = got
                out.append((slot, k, detail, split_steps(t, rng)))
                break
        else:
            raise ValueError(f"{entry['id']}: no perturbation applies")
    return out


# --------------------------------------------------------------- cassettes


_UNSAFE = re.compile("[\u007f-\u009f\u2028\u2029\ufeff]")


def yaml_str(s):
    """s as a YAML double-quoted scalar (JSON's escapes, printable characters kept)."""
    return _UNSAFE.sub(lambda m: "\\u%04x" % ord(m.group()), json.dumps(s, ensure_ascii=False))


def cassette(case_id, runs):
    """One case's cassette: per slot, the model's steps then an answer per user turn."""
    lines = [f"# Written by scripts/bfcl_differential.py: one run per perturbed trajectory (seed = slot).", f"case: {yaml_str(case_id)}", "runs:"]
    for slot, kind, detail, steps in runs:
        lines.append(f"  - when: {{seed: {slot}}}  # {kind}: {detail.replace(chr(10), ' ')}")
        lines.append("    turns:")
        for turn in steps:
            for step in turn:
                lines.append("      - tool_calls:")
                for c in step:
                    lines.append(f"          - {{name: {yaml_str(c['name'])}, raw_arguments: {yaml_str(json.dumps(c['args'], ensure_ascii=False))}}}")
            lines.append(f"      - content: {ANSWER}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------- commands


def prepare(args):
    checker, utils, config = load_bfcl(args.bfcl_root)
    sigs = Signatures(config)
    cats = args.categories.split(",") if args.categories else CATEGORIES
    entries = load_entries(args.bfcl_root, cats)
    if args.limit:
        entries = [x for c in cats for x in [e for e in entries if e[0] == c][: args.limit]]
    if args.sample:
        # A seeded sample of N entries per category; each gives SLOTS
        # trajectories, one per kind where the kind applies.
        rng = random.Random(f"sample/{args.seed}")
        picked = set()
        for c in cats:
            ids = [e["id"] for cat, e, _ in entries if cat == c]
            picked.update(rng.sample(ids, min(args.sample, len(ids))))
        entries = [x for x in entries if x[1]["id"] in picked]
    if args.suite:
        check_suite_goldens(args.suite, entries, sigs)
    os.makedirs(os.path.join(args.out, "cassettes"), exist_ok=True)
    start, counts = time.time(), collections.Counter()
    with open(os.path.join(args.out, "manifest.jsonl"), "w", encoding="utf-8") as man:
        for cat, entry, gt in entries:
            turns = [[parse_call(c, entry["involved_classes"], sigs) for c in calls] for calls in gt]
            # The conversion's own check: the golden, written as a model's
            # calls, passes BFCL's checker (all 800 do, as BFCL's strings).
            golden = bfcl_verdict(checker, utils, entry, gt, [[calls] for calls in turns], "bfcldiff_golden")
            if not golden["valid"]:
                sys.exit(f"bfcl_differential: {entry['id']}: the golden as model calls fails BFCL's checker: {golden}")
            runs = trajectories(entry, turns, args.seed)
            for slot, kind, detail, steps in runs:
                verdict = bfcl_verdict(checker, utils, entry, gt, steps, f"bfcldiff_s{slot}")
                counts[(kind, verdict["valid"])] += 1
                man.write(json.dumps({"case": entry["id"], "category": "multi_turn_" + cat, "seed": slot, "kind": kind, "detail": detail,
                                      "steps": steps, "bfcl": verdict}, ensure_ascii=False) + "\n")
            with open(os.path.join(args.out, "cassettes", entry["id"] + ".yaml"), "w", encoding="utf-8") as f:
                f.write(cassette(entry["id"], runs))
    # The case ids, the categories interleaved, so that a run of the
    # first N lines (the driver runs them in chunks) is stratified too.
    order = [[e["id"] for cat, e, _ in entries if cat == c] for c in cats]
    with open(os.path.join(args.out, "cases.txt"), "w", encoding="utf-8") as f:
        f.write("".join(ids[i] + "\n" for i in range(max(map(len, order), default=0)) for ids in order if i < len(ids)))
    n = sum(counts.values())
    print(f"bfcl_differential: {len(entries)} entries, {n} trajectories in {time.time() - start:.1f}s; BFCL valid per kind:")
    for k in KINDS:
        v, f = counts[(k, True)], counts[(k, False)]
        if v + f:
            print(f"  {k:15} {v + f:5} trajectories, {v:5} valid")
    if args.suite:
        write_config(args)


def check_suite_goldens(suite, entries, sigs):
    """Checks that the imported cases' golden turns are the calls converted
    here (key order aside). It needs PyYAML, outside the standard library:
    without it the check is skipped, saying so."""
    try:
        import yaml
    except ImportError:
        print("bfcl_differential: no PyYAML: the imported cases' goldens are not compared with this conversion")
        return
    want = {e["id"]: [[parse_call(c, e["involved_classes"], sigs) for c in calls] for calls in gt] for _, e, gt in entries}
    seen = 0
    for dirpath, _, files in os.walk(os.path.join(suite, "cases")):
        for name in sorted(files):
            if not name.endswith(".yaml"):
                continue
            with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                for case in yaml.safe_load_all(f):
                    if not case or case.get("id") not in want:
                        continue
                    g = case["golden"]
                    turns = [[{"name": c["tool"], "args": c.get("args") or {}} for c in t.get("calls") or []] for t in g.get("turns", [g])]
                    if json.dumps(turns, sort_keys=True) != json.dumps(want[case["id"]], sort_keys=True):
                        sys.exit(f"bfcl_differential: {case['id']}: the imported golden differs from BFCL's ground truth as converted here")
                    seen += 1
    if seen != len(want):
        sys.exit(f"bfcl_differential: {suite}: {len(want) - seen} of the entries have no imported case")
    print(f"bfcl_differential: the {seen} imported goldens are BFCL's ground truth as converted here")


def write_config(args):
    """DIR/differential.cue: the suite's bfcl_multi_turn.cue replaying DIR/cassettes with seeds 1..SLOTS."""
    src = os.path.join(args.suite, "bfcl_multi_turn.cue")
    if not os.path.exists(src):
        sys.exit(f"bfcl_differential: {src} not found (import the multi-turn categories first)")
    text = open(src, encoding="utf-8").read()
    seeds = ", ".join(str(i) for i in range(1, SLOTS + 1))
    edits = [
        (r'(?m)^name:\s*"[^"]*"', 'name: "bfcl-differential"'),
        (r'(?m)^backend:\s*replay:\s*"[^"]*"', "backend: replay: " + json.dumps(os.path.abspath(os.path.join(args.out, "cassettes")))),
        (r"(?m)^[ \t]+models:\s*\[[^\]]*\]", f'\tmodels: ["bfcl-differential"]\n\t// one perturbed trajectory per seed (scripts/bfcl_differential.py)\n\tseeds: [{seeds}]'),
    ]
    for pattern, repl in edits:
        text, n = re.subn(pattern, lambda m: repl, text, count=1)
        if n != 1:
            sys.exit(f"bfcl_differential: {src}: no {pattern!r} to replace")
    with open(os.path.join(args.out, "differential.cue"), "w", encoding="utf-8") as f:
        f.write("// Written by scripts/bfcl_differential.py from " + src + ".\n" + text)


# BFCL's checks of a turn, in the order it makes them, and the reason
# toolward gives for each (the import's min_calls, state and
# contains_golden_results).
CHECKS = [("multi_turn:empty_turn_model_response", "missing_call"),
          ("multi_turn:instance_state_mismatch", "state_mismatch"),
          ("multi_turn:execution_response_mismatch", "missing_result")]
_TURN = re.compile(r"expect\.turns\[(\d+)\]")


def toolward_failure(reasons):
    """The first user turn toolward's reasons name and, of BFCL's checks, the
    first that failed there (as BFCL's error type), or the reason code
    when none of them did."""
    at = collections.defaultdict(set)
    for r in reasons:
        m = _TURN.search(r["detail"])
        at[int(m.group(1)) if m else 0].add(r["code"])
    turn = min(at)
    for bfcl, code in CHECKS:
        if code in at[turn]:
            return turn, bfcl
    return turn, ",".join(sorted(at[turn]))


def compare(args):
    manifest = {(m["case"], m["seed"]): m for m in read_jsonl(os.path.join(args.out, "manifest.jsonl"))}
    runs = {}
    for d in args.results:
        for r in read_jsonl(os.path.join(d, "runs.jsonl")):
            key = (r["case"], r["cell"]["seed"])
            if key in manifest and (key not in runs or runs[key]["outcome"] == "error"):
                runs[key] = r
    # per kind and per category: [agreeing, trajectories, BFCL valid]
    by_kind, by_cat = collections.defaultdict(lambda: [0, 0, 0]), collections.defaultdict(lambda: [0, 0, 0])
    disagree, missing, errors = [], [], []
    both = collections.Counter()  # (BFCL valid, toolward pass)
    why, other = collections.Counter(), []  # both fail: at the same turn, by the same check?
    for key, m in sorted(manifest.items()):
        r = runs.get(key)
        if r is None:
            missing.append(key)
            continue
        if r["outcome"] == "error":
            errors.append((m, r))
            continue
        agree = (r["outcome"] == "pass") == m["bfcl"]["valid"]
        both[(m["bfcl"]["valid"], r["outcome"] == "pass")] += 1
        for table, k in ((by_kind, m["kind"]), (by_cat, m["category"])):
            table[k][0] += agree
            table[k][1] += 1
            table[k][2] += m["bfcl"]["valid"]
        if not agree:
            disagree.append((m, r))
        elif r["outcome"] == "fail" and "turn" in m["bfcl"]:
            got = toolward_failure(r.get("reasons") or [])
            want = (m["bfcl"]["turn"], m["bfcl"]["error_type"])
            why[got == want] += 1
            if got != want:
                other.append((m, got))
    total = sum(n for _, n, _ in by_kind.values())
    agreed = sum(a for a, _, _ in by_kind.values())
    pct = lambda a, n: f"{100 * a / n:.2f}%" if n else "-"
    print(f"agreement: {agreed} of {total} trajectories ({pct(agreed, total)}); {len(errors)} infrastructure errors, {len(missing)} without a run")
    print(f"  both pass {both[(True, True)]}, both fail {both[(False, False)]}, only BFCL passes {both[(True, False)]}, only toolward passes {both[(False, True)]}")
    print(f"  of the {why[True] + why[False]} failing both: {why[True]} fail at the same turn by the same check")
    for title, table in (("per kind", by_kind), ("per category", by_cat)):
        print(title + ": agreeing of trajectories (BFCL valid)")
        for k in sorted(table):
            a, n, v = table[k]
            print(f"  {k:28} {a:5} of {n:5} ({v:4} valid)  {pct(a, n)}")
    for m, r in disagree:
        reasons = "; ".join(f"{x['code']}: {x['detail']}" for x in r.get("reasons") or [])
        b = m["bfcl"]
        print(f"DISAGREE {m['case']} seed {m['seed']} {m['kind']} ({m['detail']}): BFCL {'valid' if b['valid'] else 'invalid ' + b.get('error_type', '') + ': ' + b.get('error_message', '')}; toolward {r['outcome']}{': ' + reasons if reasons else ''}")
    for m, (turn, check) in other:
        b = m["bfcl"]
        print(f"OTHER REASON {m['case']} seed {m['seed']} {m['kind']} ({m['detail']}): BFCL fails turn {b['turn']} with {b['error_type']}; toolward first fails turn {turn} with {check}")
    for m, r in errors:
        print(f"ERROR {m['case']} seed {m['seed']} {m['kind']}: {r.get('error', {}).get('kind')}: {r.get('error', {}).get('message', '')[:300]}")
    if missing:
        left = collections.Counter(manifest[k]["category"] for k in missing)
        print("without a run: " + ", ".join(f"{c} {n}" for c, n in sorted(left.items())))
    return 0 if not disagree and not errors and not missing else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("prepare", help="write the perturbed trajectories' cassettes and BFCL's verdicts")
    pp.add_argument("--bfcl-root", required=True, help="the directory holding bfcl_eval/ (e.g. ../shared/bfcl-v4)")
    pp.add_argument("--out", required=True, help="the directory to write (cassettes/, manifest.jsonl)")
    pp.add_argument("--suite", help="the imported suite (toolward import bfcl), to write DIR/differential.cue")
    pp.add_argument("--categories", help="comma-separated among " + ",".join(CATEGORIES))
    pp.add_argument("--limit", type=int, default=0, help="the first N entries of each category")
    pp.add_argument("--sample", type=int, default=0, help="a seeded sample of N entries of each category")
    pp.add_argument("--seed", type=int, default=1, help="the perturbations' seed")
    pc = sub.add_parser("compare", help="compare a toolward run's verdicts with BFCL's")
    pc.add_argument("--out", required=True, help="the directory prepare wrote")
    pc.add_argument("--results", required=True, nargs="+", help="the toolward result directories (holding runs.jsonl)")
    args = p.parse_args()
    if args.cmd == "prepare":
        prepare(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
