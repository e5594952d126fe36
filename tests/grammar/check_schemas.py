"""Feeds every schema `savant-think` can send as structured output to two
real grammar converters and fails on any that they reject, fall back on, or
blow up:

- llama-cpp-python's `json_schema_to_gbnf` (`llama_cpp/llama_grammar.py`, the
  Python port of llama.cpp's json_schema_to_grammar.py that its server runs on
  `response_format`): an exception there makes the server fall back to "any
  JSON" silently; a grammar over GRAMMAR_BYTES (a long length bound expanded
  into nested rules) made its grammar parser crash.
- llguidance (the engine behind several servers' structured outputs): an
  error or a warning (an unimplemented keyword, an unsatisfiable schema).

    python check_schemas.py LLAMA_GRAMMAR_PY SCHEMA_DIR

Prints one line per schema, then `N passed, N failed`; exits 1 on a failure.
"""

import importlib.util
import json
import pathlib
import re
import sys

GRAMMAR_BYTES = 64 * 1024
REPEAT_BOUND = 64


def load_converter(path):
    spec = importlib.util.spec_from_file_location("llama_grammar_standalone", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.json_schema_to_gbnf


def llama_cpp(convert, schema):
    try:
        grammar = convert(json.dumps(schema))
    except Exception as e:  # the server's fallback to plain JSON
        return f"llama.cpp rejects it ({type(e).__name__}: {e})", 0
    if len(grammar) > GRAMMAR_BYTES:
        return f"llama.cpp grammar of {len(grammar)} bytes (bound {GRAMMAR_BYTES})", len(grammar)
    for m in re.finditer(r"\{(\d*),?(\d*)\}", grammar):
        n = max(int(x) for x in m.groups() if x) if any(m.groups()) else 0
        if n > REPEAT_BOUND:
            return f"llama.cpp grammar repeats {n} times", len(grammar)
    return None, len(grammar)


def llguidance(schema):
    import llguidance as llg

    try:
        grammar = llg.LLMatcher.grammar_from_json_schema(json.dumps(schema))
        is_error, messages = llg.LLMatcher.validate_grammar_with_warnings(grammar)
    except Exception as e:
        return f"llguidance rejects it ({e})"
    if is_error or messages:
        return f"llguidance: {'; '.join(messages) or 'error'}"
    return None


def main():
    convert = load_converter(sys.argv[1])
    files = sorted(pathlib.Path(sys.argv[2]).glob("*.json"))
    if not files:
        print("no schema to check", file=sys.stderr)
        return 1
    passed = failed = 0
    for f in files:
        schema = json.loads(f.read_text())
        error, size = llama_cpp(convert, schema)
        problems = [p for p in (error, llguidance(schema)) if p]
        if problems:
            failed += 1
            print(f"FAIL {f.name}: {' | '.join(problems)}")
        else:
            passed += 1
            print(f"ok   {f.name}: llama.cpp grammar {size} bytes")
    print(f"schemas: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
