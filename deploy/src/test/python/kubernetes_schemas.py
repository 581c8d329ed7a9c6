#!/usr/bin/env python3
"""Turns Kubernetes' own OpenAPI v2 document into strict JSON schemas, one file per kind.

    kubernetes_schemas.py SWAGGER_JSON OUT_DIR

SWAGGER_JSON is api/openapi-spec/swagger.json of a Kubernetes release (HelmChartIT takes it from
the k8s.io/kubernetes Go module). For every group, version and kind it names
(x-kubernetes-group-version-kind), OUT_DIR gets KIND[-GROUP]-VERSION.json in the layout
kubeconform looks up ("{{ .ResourceKind }}{{ .KindSuffix }}.json": the kind in lower case, the
first label of the group, the version), holding a $ref to that kind's definition and every
definition it reaches, so that each file stands alone.

What changes from the document, and why:
- strict: an object schema that lists its properties and says nothing of others gets
  additionalProperties false, so that an unknown or misspelt field is an error (the API server
  would drop it, or refuse it with fieldValidation=Strict);
- IntOrString (format int-or-string) takes a string or an integer, and a Quantity a string or a
  number, as the API server does;
- descriptions and the x-kubernetes-* extensions are left out: no validator reads them.
Types, required fields, enums and formats are Kubernetes' own.
"""

import json
import os
import sys

INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
PREFIX = "#/definitions/"


def convert(schema):
    """The schema with Kubernetes' extensions resolved, strict for objects with properties."""
    if isinstance(schema, list):
        return [convert(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get("format") == "int-or-string":
        return {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    out = {}
    for key, value in schema.items():
        if key == "description" or key.startswith("x-kubernetes-"):
            continue
        if key == "properties":
            out[key] = {name: convert(prop) for name, prop in value.items()}
        else:
            out[key] = convert(value)
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def references(schema, found):
    """Adds the definition names that schema refers to."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(PREFIX):
            found.add(ref[len(PREFIX) :])
        for value in schema.values():
            references(value, found)
    elif isinstance(schema, list):
        for item in schema:
            references(item, found)


def reachable(name, definitions):
    """Every definition name reachable from name, itself included."""
    seen, todo = set(), [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        if current not in definitions:
            raise SystemExit("definition %s is referred to but missing" % current)
        seen.add(current)
        found = set()
        references(definitions[current], found)
        todo.extend(found - seen)
    return seen


def file_name(group, version, kind):
    """kubeconform's name for a kind's schema: its KindSuffix is -GROUPLABEL-VERSION."""
    api_version = version if not group else group + "/" + version
    parts = api_version.split("/")
    suffix = "-" + parts[0].split(".")[0].lower()
    if len(parts) > 1:
        suffix += "-" + parts[1].lower()
    return kind.lower() + suffix + ".json"


def main(swagger_path, out_dir):
    with open(swagger_path, encoding="utf-8") as f:
        document = json.load(f)
    definitions = {}
    for name, schema in document["definitions"].items():
        if name == INT_OR_STRING:
            definitions[name] = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
        elif name == QUANTITY:
            definitions[name] = {"oneOf": [{"type": "string"}, {"type": "number"}]}
        else:
            definitions[name] = convert(schema)
    os.makedirs(out_dir, exist_ok=True)
    written = {}
    for name, schema in sorted(document["definitions"].items()):
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            target = file_name(gvk.get("group", ""), gvk["version"], gvk["kind"])
            if target in written:
                if written[target] != name:
                    raise SystemExit(
                        "%s and %s both map to %s" % (written[target], name, target)
                    )
                continue
            written[target] = name
            standalone = {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "$ref": PREFIX + name,
                "definitions": {n: definitions[n] for n in sorted(reachable(name, definitions))},
            }
            with open(os.path.join(out_dir, target), "w", encoding="utf-8") as f:
                json.dump(standalone, f, separators=(",", ":"), sort_keys=True)
    print("%d schemas written to %s" % (len(written), out_dir))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: kubernetes_schemas.py SWAGGER_JSON OUT_DIR")
    main(sys.argv[1], sys.argv[2])
