#!/usr/bin/env python3
"""Reads every YAML document of the .yaml files under a directory into one JSON file.

    yaml_docs.py DIR OUT_JSON

OUT_JSON gets a list of {"file": PATH RELATIVE TO DIR, "doc": DOCUMENT}, files in name order,
documents in file order, empty documents left out. HelmChartIT renders the chart with
helm template --output-dir and reads the result through this, with PyYAML's safe loader.
"""

import json
import os
import sys

import yaml


def main(root, out_path):
    found = []
    for directory, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            if not name.endswith(".yaml"):
                continue
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8") as f:
                for doc in yaml.safe_load_all(f):
                    if doc is not None:
                        found.append({"file": os.path.relpath(path, root), "doc": doc})
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(found, f)
    print("%d documents" % len(found))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: yaml_docs.py DIR OUT_JSON")
    main(sys.argv[1], sys.argv[2])
