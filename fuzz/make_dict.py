#!/usr/bin/env python3
"""Writes a libFuzzer dictionary of the parser's own string literals to stdout.

The parser's matchers key on literal words (`---- `, ` stdout ----`, `##[error]`, `FAILED`…);
without them the fuzzer rarely builds a line that reaches a rule's slicing code (a panic on
`---- stdout ----` survived 637k runs without one). The dictionary is derived from the source
each time, so it never goes stale: `python3 make_dict.py > parse_bytes.dict`, then
`cargo fuzz run parse_bytes SEEDS -- -dict=parse_bytes.dict`.
"""
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "crates" / "parser" / "src"
# A plain (not raw) string or byte-string literal; raw strings are regexes, taken apart below.
LITERAL = re.compile(r'(?<![r#\w])b?"((?:[^"\\\n]|\\.){2,48})"')
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}


def unescape(s: str):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = s[i + 1]
        if nxt in ESCAPES:
            out.append(ESCAPES[nxt])
            i += 2
        elif nxt == "x":
            out.append(chr(int(s[i + 2 : i + 4], 16)))
            i += 4
        elif nxt == "u":
            end = s.index("}", i)
            out.append(chr(int(s[i + 3 : end], 16)))
            i = end + 1
        else:
            return None  # a line continuation or something the dictionary does not need
    return "".join(out)


def dict_entry(text: str) -> str:
    # libFuzzer's dictionary format: printable ASCII as is, `\\`, `\"` and `\xNN` for the rest.
    out = []
    for b in text.encode("utf-8"):
        ch = chr(b)
        if ch in '\\"':
            out.append("\\" + ch)
        elif 0x20 <= b < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\x{b:02X}")
    return '"' + "".join(out) + '"'


def main() -> None:
    words = set()
    for path in sorted(SRC.rglob("*.rs")):
        text = path.read_text()
        # Unit tests hold whole log lines: those belong in the seed corpus, not the dictionary.
        text = text.split("#[cfg(test)]")[0]
        for m in LITERAL.finditer(text):
            w = unescape(m.group(1))
            if w and w.strip() and "{}" not in w:
                words.add(w)
    for w in sorted(words):
        print(dict_entry(w))
    print(f"{len(words)} words from {SRC}", file=sys.stderr)


if __name__ == "__main__":
    main()
