"""The Python SDK client's output validator applied to schemas and values.

    .venv/bin/python validators.py <cases.json>

Reads ``[{"schema": ..., "values": [...]}]`` and prints, in the same order,
``{"compiles": bool, "error": str|None, "accepts": [bool...]}``. The validator is built as
``mcp.client.session.ClientSession`` builds it: the class the schema's ``$schema`` names
(2020-12 for ours), ``check_schema`` first, an empty registry (no remote ``$ref``s), and a
``$ref`` that does not resolve counts as a failure to compile.
"""

import json
import sys

from jsonschema import SchemaError
from jsonschema.validators import validator_for
from referencing import Registry
from referencing.exceptions import Unresolvable


def answer(case):
    schema = case["schema"]
    cls = validator_for(schema)
    try:
        cls.check_schema(schema)
        validator = cls(schema, registry=Registry())
        accepts = [not any(True for _ in validator.iter_errors(v)) for v in case["values"]]
    except (SchemaError, Unresolvable) as err:
        return {"compiles": False, "error": str(err)[:300], "accepts": []}
    return {"compiles": True, "error": None, "accepts": accepts}


with open(sys.argv[1], encoding="utf-8") as cases:
    print(json.dumps([answer(c) for c in json.load(cases)]))
