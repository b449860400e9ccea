"""Runs Python programs (the docs' ```python blocks) under the Pulumi Python SDK's mocks, one after
another in this process, so the SDK is imported once for all of them.

Every resource a program registers is written to <records> as a JSON line: the program's file, the
type token, the name and the inputs as they go on the wire (camelCase, as the plugin's schema names
them). A program that raises is written as a line with its traceback instead. The mocks answer a
resource with its inputs and, for each output the schema lists, a placeholder of the output's type,
so a program that passes one resource's output to another runs as it would against the plugin.

Usage: python run-python-blocks.py <schema.json> <records.jsonl> <program.py>...
"""

import json
import sys
import traceback

import pulumi
from pulumi.runtime import rpc

schema_file, records_file, *programs = sys.argv[1:]
with open(schema_file, encoding="utf-8") as f:
    resources = json.load(f)["resources"]


def placeholder(name, prop, spec):
    kind = spec.get("type")
    if kind == "string":
        return f"{name}.{prop}"
    if kind in ("number", "integer"):
        return 0
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    return {}


def reference(ref, keep_unknowns=None):
    """A resource among a resource's inputs, as the mocks receive it: `resource <type token>`."""
    return "resource " + str(ref["urn"]).split("::")[2].split("$")[-1]


# The SDK would make a resource object of the reference on the mocks' thread, whose lookup the
# program's event loop then waits for ("attached to a different loop"): the records need its type only.
rpc.deserialize_resource = reference


class Mocks(pulumi.runtime.Mocks):
    def __init__(self, program, out):
        self.program = program
        self.out = out

    def new_resource(self, args):
        record = {"program": self.program, "type": args.typ, "name": args.name, "inputs": args.inputs}
        self.out.write(json.dumps(record) + "\n")
        outputs = dict(args.inputs)
        for prop, spec in resources.get(args.typ, {}).get("properties", {}).items():
            outputs.setdefault(prop, placeholder(args.name, prop, spec))
        return [f"{args.name}-id", outputs]

    def call(self, args):
        return {}


with open(records_file, "w", encoding="utf-8") as out:
    for program in programs:
        with open(program, encoding="utf-8") as f:
            code = compile(f.read(), program, "exec")
        pulumi.runtime.set_mocks(Mocks(program, out), project="docs", stack="test", preview=False)

        @pulumi.runtime.test
        def run():
            exec(code, {"__name__": "__main__"})

        try:
            run()
        except Exception:  # the program's error, reported with the others
            out.write(json.dumps({"program": program, "error": traceback.format_exc()}) + "\n")
