"""peer_json.py: reading the JSON a peer run leaves, for the report scripts."""

import json


def read_json(path):
    """The JSON object in `path`; for JSON lines (possibly after other
    output), the last one. None when the file is missing, empty or holds
    none."""
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        lines = [line for line in text.splitlines() if line.startswith("{")]
        try:
            return json.loads(lines[-1]) if lines else None
        except ValueError:
            return None
