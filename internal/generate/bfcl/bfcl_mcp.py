#!/usr/bin/env python3
"""An MCP server (stdio, JSON-RPC lines) over BFCL's multi-turn back ends.

Written for toolward (internal/generate/bfcl, embedded in the binary and
written by `toolward import bfcl` to OUT/server/bfcl_mcp.py). It runs the
Berkeley Function Calling Leaderboard's own classes from the BFCL
installation the user has (a gorilla checkout or `pip install bfcl-eval`),
so every result string, random id and exception text is BFCL's. Python 3.9+
standard library only, plus what BFCL's classes import (mpmath).

    bfcl_mcp.py --bfcl-root ROOT --tools TOOLS.json     serve (stdio)
    bfcl_mcp.py export --bfcl-root ROOT --data DIR       the import's data

ROOT is the directory that holds bfcl_eval/. Serving:

- every function of the involved classes is a tool (TOOLS.json, written by
  the import: BFCL's function documents typed as BFCL types them for
  function-calling models). A call is executed by BFCL's own
  execute_multi_turn_func_call on the loaded instances, with the call
  written as BFCL's function-calling handlers write it
  (name(k=repr(v),...)), so its result text is BFCL's byte for byte.
- bfcl_load {initial_config, involved_classes, long_context} (probe-only)
  instantiates the classes and loads the scenario as BFCL does; a second
  load starts a new world. initial_config may be JSON text, which keeps
  its key order where an object (through toolward's maps) would not: BFCL
  reads the scenario in order (the file system's root is the first key of
  "root", a directory lists its entries in their order).
- bfcl_state {} (probe-only) returns the public attributes of every
  involved instance as canonical JSON: two states are equal as JSON
  exactly when BFCL's state checker (Python ==, attribute by attribute)
  calls them equal (see canon).

export prints one JSON document: the tools, BFCL's step limit and added-
functions text, and every multi-turn entry with its ground truth turned
into {tool, args} calls (Python's ast; positional arguments named from the
method's signature).
"""

import argparse
import ast
import copy
import importlib
import inspect
import json
import os
import sys
import uuid

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
# BFCL's note for Python functions (bfcl_eval/utils.py, _get_language_specific_hint).
PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
# BFCL's GORILLA_TO_OPENAPI (bfcl_eval/constants/type_mappings.py).
OPENAPI_TYPE = {
    "integer": "integer", "number": "number", "float": "number", "string": "string",
    "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
    "dict": "object", "object": "object", "tuple": "array", "any": "string",
    "byte": "integer", "short": "integer", "long": "integer", "double": "number",
    "char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object",
    "Hashtable": "object", "Queue": "array", "Stack": "array", "Any": "string",
    "String": "string", "Bigint": "integer",
}
PROBE_META = {"toolward/probe_only": True}
# The classes of the multi-turn categories (the memory and web search back
# ends share BFCL's pipeline but belong to other categories).
CLASSES = ("GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI", "TradingBot", "TravelAPI",
           "VehicleControlAPI")


class Setup(Exception):
    """The BFCL installation is missing or unusable (exit status 3)."""


def load_bfcl(root):
    """Imports BFCL's execution helpers from root; Setup says what is missing."""
    if sys.version_info < (3, 9):
        raise Setup("python %d.%d is too old: BFCL's back ends need Python 3.9 or later" % sys.version_info[:2])
    utils = os.path.join(root, "bfcl_eval", "eval_checker", "multi_turn_eval", "multi_turn_utils.py")
    if not os.path.isfile(utils):
        raise Setup("%s: no BFCL multi-turn back end here (want bfcl_eval/eval_checker/multi_turn_eval/ under %s)" % (utils, root))
    sys.path.insert(0, root)
    try:
        from bfcl_eval.constants import executable_backend_config as cfg
        from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils as mtu
    except ImportError as e:
        raise Setup("importing BFCL from %s: %s" % (root, e))
    return cfg, mtu


def import_class(cfg, name):
    if name not in cfg.CLASS_FILE_PATH_MAPPING:
        raise ValueError("unknown BFCL class %r (known: %s)" % (name, ", ".join(sorted(cfg.CLASS_FILE_PATH_MAPPING))))
    try:
        module = importlib.import_module(cfg.CLASS_FILE_PATH_MAPPING[name])
    except ImportError as e:
        hint = " (Debian: apt install python3-mpmath; else pip install mpmath)" if "mpmath" in str(e) else ""
        raise Setup("importing BFCL's %s: %s%s" % (name, e, hint))
    return getattr(module, name)


# ---- canonical state ------------------------------------------------------

def canon(v, stack=()):
    """Returns v as JSON values such that canon(a) == canon(b) as JSON
    (objects unordered) exactly when a == b in Python, for the values BFCL's
    classes keep: bool is 1/0 (True == 1), an integral float is its exact
    integer (2.0 == 2), tuples, sets and non-string keys are marked ((1,)
    != [1], {1: x} != {"1": x}), a File or Directory is what its __eq__
    compares (name and content; name and contents, not the parent), NaN and
    objects compared by identity never equal anything."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if v != v:
            return {"#nan": uuid.uuid4().hex}
        if v in (float("inf"), float("-inf")):
            return {"#float": repr(v)}
        return int(v) if v == int(v) else v
    if id(v) in stack:
        raise ValueError("the state holds a cycle through a %s" % type(v).__name__)
    stack = stack + (id(v),)
    if isinstance(v, list):
        return [canon(x, stack) for x in v]
    if isinstance(v, tuple):
        return {"#tuple": [canon(x, stack) for x in v]}
    if isinstance(v, (set, frozenset)):
        return {"#set": sorted((canon(x, stack) for x in v), key=dumps)}
    if isinstance(v, dict):
        return {canon_key(k): canon(x, stack) for k, x in v.items()}
    kind = type(v).__name__
    if kind == "File" and hasattr(v, "content"):
        return {"#File": {"name": canon(v.name, stack), "content": canon(v.content, stack)}}
    if kind == "Directory" and hasattr(v, "contents"):
        return {"#Directory": {"name": canon(v.name, stack), "contents": canon(v.contents, stack)}}
    if type(v).__eq__ is object.__eq__:
        return {"#object": "%s %s" % (kind, uuid.uuid4().hex)}
    return {"#" + kind: canon(vars(v), stack)}


def canon_key(k):
    if isinstance(k, str):
        return "#" + k if k.startswith("#") else k
    return "#" + dumps(canon(k))


def dumps(v):
    return json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


# ---- the server -----------------------------------------------------------

class World:
    """The instances of one loaded scenario, kept by BFCL's own helper."""

    loads = 0  # worlds loaded in this process

    def __init__(self, cfg, mtu):
        self.cfg, self.mtu = cfg, mtu
        self.args = None

    def load(self, initial_config, involved_classes, long_context):
        if isinstance(initial_config, str):
            try:
                initial_config = json.loads(initial_config)
            except ValueError as e:
                raise ValueError("initial_config: not JSON text: %s" % e)
        if not isinstance(initial_config, dict):
            raise ValueError("initial_config: want an object, or JSON text of one")
        if not isinstance(involved_classes, list) or not involved_classes or not all(isinstance(c, str) for c in involved_classes):
            raise ValueError("involved_classes: want a non-empty list of class names")
        for c in involved_classes:
            import_class(self.cfg, c)
        World.loads += 1
        # BFCL keeps instances in its module's globals, named after the
        # model and the entry; a new name per load is a new world.
        self.args = (initial_config, involved_classes, "toolward_%d" % World.loads, "world", bool(long_context))
        self.execute([])

    def execute(self, calls):
        initial_config, classes, model, entry, long_context = self.args
        return self.mtu.execute_multi_turn_func_call(calls, initial_config, classes, model, entry, long_context=long_context)

    def call(self, name, args):
        text = "%s(%s)" % (name, ",".join("%s=%r" % (k, v) for k, v in args.items()))
        refused = unsafe(text)
        if refused:
            return refused
        results, _ = self.execute([text])
        return results[0]

    def state(self):
        _, instances = self.execute([])
        out = {}
        for cls, inst in instances.items():
            out[cls] = {canon_key(k): canon(v) for k, v in vars(inst).items() if not k.startswith("_")}
        return dumps(out)


SAFE_NODES = (ast.Expression, ast.Call, ast.Name, ast.Load, ast.keyword, ast.Constant, ast.List, ast.Tuple,
              ast.Set, ast.Dict, ast.UnaryOp, ast.USub, ast.UAdd)


def unsafe(text):
    """BFCL evaluates the call text; a text that is not one call with
    literal keyword arguments (only a hostile argument name makes one) is
    not evaluated here. A syntax error gets BFCL's own message."""
    try:
        tree = compile(text, "<string>", "eval", ast.PyCF_ONLY_AST)
    except SyntaxError as e:
        return "Error during execution: %s" % e
    ok = isinstance(tree.body, ast.Call) and not tree.body.args
    for node in ast.walk(tree):
        if not isinstance(node, SAFE_NODES) or (isinstance(node, ast.Call) and node is not tree.body):
            ok = False
    if ok:
        return None
    return "Error during execution: toolward's BFCL server refuses to evaluate %r: an argument name is not a Python identifier" % text


class Server:
    def __init__(self, cfg, mtu, tools):
        self.world = World(cfg, mtu)
        self.tools = {t["name"]: t for t in tools}
        self.listed = [{"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]} for t in tools]
        self.listed.append({
            "name": "bfcl_load", "description": "Loads a BFCL scenario: instantiates the involved classes with their initial_config (toolward's setup; never offered to the model).",
            "inputSchema": {"type": "object", "properties": {
                "initial_config": {"type": ["object", "string"]}, "involved_classes": {"type": "array", "items": {"type": "string"}},
                "long_context": {"type": "boolean"}}, "required": ["initial_config", "involved_classes"]},
            "annotations": {"readOnlyHint": False}, "_meta": PROBE_META})
        self.listed.append({
            "name": "bfcl_state", "description": "The public state of every involved instance as canonical JSON (toolward's state probe; never offered to the model).",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": {"readOnlyHint": True}, "_meta": PROBE_META})

    def handle(self, req):
        method, params = req.get("method"), req.get("params") or {}
        if method == "initialize":
            asked = params.get("protocolVersion")
            return {"protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
                    "capabilities": {"tools": {}}, "serverInfo": {"name": "toolward-bfcl", "version": "1"}}
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": self.listed}
        if method == "tools/call":
            return self.call(params.get("name"), params.get("arguments") or {})
        raise RPCError(-32601, "method not found: %s" % method)

    def call(self, name, args):
        if not isinstance(args, dict):
            raise RPCError(-32602, "arguments: want an object")
        try:
            if name == "bfcl_load":
                self.world.load(args.get("initial_config", {}), args.get("involved_classes"), args.get("long_context", False))
                return text_result("loaded %s" % ", ".join(self.world.args[1]))
            if name not in self.tools and name != "bfcl_state":
                raise RPCError(-32602, "unknown tool: %s" % name)
            if self.world.args is None:
                return text_result("no BFCL scenario loaded: call bfcl_load first", True)
            if name == "bfcl_state":
                return text_result(self.world.state())
            return text_result(self.world.call(name, args))
        except (ValueError, Setup) as e:
            return text_result(str(e), True)


class RPCError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def text_result(text, error=False):
    r = {"content": [{"type": "text", "text": text}]}
    if error:
        r["isError"] = True
    return r


def serve(cfg, mtu, tools_path):
    with open(tools_path, encoding="utf-8") as f:
        srv = Server(cfg, mtu, json.load(f))
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            reply(out, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error: %s" % e}})
            continue
        if not isinstance(req, dict) or "id" not in req:
            continue  # a notification
        try:
            msg = {"jsonrpc": "2.0", "id": req["id"], "result": srv.handle(req)}
        except RPCError as e:
            msg = {"jsonrpc": "2.0", "id": req["id"], "error": {"code": e.code, "message": str(e)}}
        except Exception as e:  # a bug here must not end the world
            msg = {"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32603, "message": "%s: %s" % (type(e).__name__, e)}}
        reply(out, msg)


def reply(out, msg):
    out.write(json.dumps(msg, ensure_ascii=False) + "\n")
    out.flush()


# ---- export (for the import) ----------------------------------------------

def fc_properties(props):
    """BFCL's cast of parameter types for function-calling models
    (_cast_to_openai_type in bfcl_eval/model_handler/utils.py)."""
    for p in props.values():
        t = p.get("type")
        if t is None:
            p["type"] = "string"
            continue
        if t == "float":
            p["format"] = "float"
            p["description"] = p.get("description", "") + " This is a float type value."
        p["type"] = OPENAPI_TYPE.get(t, "string")
        if p["type"] not in ("array", "object"):
            continue
        if "properties" in p:
            fc_properties(p["properties"])
        elif "items" in p:
            items = p["items"]
            items["type"] = OPENAPI_TYPE.get(items.get("type"), "string")
            if items["type"] == "array" and "items" in items:
                items["items"]["type"] = OPENAPI_TYPE.get(items["items"].get("type"), "string")
            elif items["type"] == "object" and "properties" in items:
                fc_properties(items["properties"])
    return props


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def export(cfg, root, data, only):
    from bfcl_eval.constants import default_prompts as prompts
    docs, tools, methods = {}, [], {}
    for cls in CLASSES:
        path = os.path.join(data, "multi_turn_func_doc", cfg.MULTI_TURN_FUNC_DOC_FILE_MAPPING[cls])
        klass = import_class(cfg, cls)
        docs[cls] = []
        for fn in read_lines(path):
            if any(t["name"] == fn["name"] for t in tools):
                raise ValueError("%s: function %s is also in another class; tool names must be unique" % (path, fn["name"]))
            params = copy.deepcopy(fn["parameters"])
            params["type"] = "object"
            params["properties"] = fc_properties(params.get("properties", {}))
            tools.append({"name": fn["name"], "class": cls, "description": fn["description"] + PYTHON_HINT,
                          "plain_description": fn["description"], "inputSchema": params})
            docs[cls].append(fn["name"])
            methods[(cls, fn["name"])] = getattr(klass, fn["name"])
    entries, skipped = [], []
    for cat in CATEGORIES:
        if only and cat not in only:
            continue
        qpath = os.path.join(data, "BFCL_v4_%s.json" % cat)
        apath = os.path.join(data, "possible_answer", "BFCL_v4_%s.json" % cat)
        if not os.path.isfile(qpath):
            continue
        answers = {a["id"]: a["ground_truth"] for a in read_lines(apath)}
        for e in read_lines(qpath):
            try:
                entries.append(export_entry(cat, e, answers, docs, methods))
            except (KeyError, ValueError, SyntaxError) as err:
                skipped.append({"id": e.get("id", "?"), "reason": "%s: %s" % (type(err).__name__, err)})
    return {"tools": tools, "step_limit": prompts.MAXIMUM_STEP_LIMIT,
            "added_text": prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC,
            "entries": entries, "skipped": skipped}


def export_entry(cat, e, answers, docs, methods):
    classes = e["involved_classes"]
    offered = [n for c in classes for n in docs[c]]
    owner = {n: c for c in classes for n in docs[c]}
    added = {}
    for turn, names in (e.get("missed_function") or {}).items():
        for n in names:
            offered.remove(n)
        added[turn] = list(names)
    turns = []
    for i, msgs in enumerate(e["question"]):
        if str(i) in added:
            if msgs:
                raise ValueError("turn %d adds functions but has a user message" % i)
            turns.append(None)
            continue
        if len(msgs) != 1 or msgs[0].get("role") != "user":
            raise ValueError("turn %d: want one user message, got %d messages" % (i, len(msgs)))
        turns.append(msgs[0]["content"])
    gt = answers[e["id"]]
    if len(gt) != len(turns):
        raise ValueError("%d ground-truth turns for %d question turns" % (len(gt), len(turns)))
    golden = [[gt_call(s, owner, methods) for s in t] for t in gt]
    return {"id": e["id"], "category": cat, "turns": turns, "involved_classes": classes,
            "initial_config": e.get("initial_config", {}), "long_context": "long_context" in cat,
            "tools": offered, "added": added, "golden": golden}


def gt_call(text, owner, methods):
    call = ast.parse(text, mode="eval").body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise ValueError("%r is not a function call" % text)
    name = call.func.id
    if name not in owner:
        raise ValueError("%r calls no function of the involved classes" % text)
    args = {}
    if call.args:
        sig = [p for p in inspect.signature(methods[(owner[name], name)]).parameters if p != "self"]
        if len(call.args) > len(sig):
            raise ValueError("%r: more positional arguments than %s takes" % (text, name))
        for p, a in zip(sig, call.args):
            args[p] = ast.literal_eval(a)
    for k in call.keywords:
        if k.arg is None or k.arg in args:
            raise ValueError("%r: argument %s given twice or unpacked" % (text, k.arg))
        args[k.arg] = ast.literal_eval(k.value)
    json.dumps(args, allow_nan=False)  # a tuple or set would not survive: BFCL's ground truth has none
    for v in args.values():
        check_json(v, text)
    return {"tool": name, "args": args}


def check_json(v, text):
    if isinstance(v, (tuple, set, bytes, complex)):
        raise ValueError("%r: a %s argument has no JSON form" % (text, type(v).__name__))
    if isinstance(v, list):
        for x in v:
            check_json(x, text)
    if isinstance(v, dict):
        for k, x in v.items():
            if not isinstance(k, str):
                raise ValueError("%r: a dict key %r is not a string" % (text, k))
            check_json(x, text)


def main(argv):
    ap = argparse.ArgumentParser(prog="bfcl_mcp.py", description=__doc__.split("\n")[0])
    ap.add_argument("mode", nargs="?", default="serve", choices=["serve", "export"])
    ap.add_argument("--bfcl-root", required=True, help="the directory that holds bfcl_eval/")
    ap.add_argument("--tools", help="serve: the tools file the import wrote")
    ap.add_argument("--data", help="export: BFCL's data directory (bfcl_eval/data)")
    ap.add_argument("--categories", default="", help="export: comma-separated multi-turn categories (default all)")
    a = ap.parse_args(argv)
    try:
        cfg, mtu = load_bfcl(os.path.abspath(a.bfcl_root))
        if a.mode == "export":
            only = [c for c in a.categories.split(",") if c]
            json.dump(export(cfg, a.bfcl_root, a.data or os.path.join(a.bfcl_root, "bfcl_eval", "data"), only), sys.stdout)
            return 0
        if not a.tools:
            ap.error("serve needs --tools")
        serve(cfg, mtu, a.tools)
    except Setup as e:
        print("bfcl_mcp.py: %s" % e, file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
