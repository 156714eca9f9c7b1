//! Recognising dependency manifests and the modules an import line names, so the guard can tell
//! "uses something already there" from "pulls in a new third-party dependency".
//!
//! Deliberately conservative: an import it cannot classify as standard library, relative,
//! already imported by the file, or explicitly allowed counts as new. Never reads any file.

use super::text::Lang;
use regex::Regex;
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// Whether `path` names a dependency manifest or lockfile (matched on the file name, anywhere).
pub fn is_dependency_manifest(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    const EXACT: &[&str] = &[
        "Cargo.toml",
        "Cargo.lock",
        "package.json",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "pnpm-workspace.yaml",
        "bun.lock",
        "bun.lockb",
        "deno.json",
        "deno.jsonc",
        "deno.lock",
        "pyproject.toml",
        "poetry.lock",
        "uv.lock",
        "pdm.lock",
        "setup.py",
        "setup.cfg",
        "environment.yml",
        "environment.yaml",
        "conda-lock.yml",
        "go.mod",
        "go.sum",
        "go.work",
        "go.work.sum",
        "pom.xml",
        "gradle.lockfile",
        "libs.versions.toml",
        "Gemfile",
        "Gemfile.lock",
        "gems.rb",
        "gems.locked",
        "composer.json",
        "composer.lock",
        "Package.swift",
        "Package.resolved",
        "Podfile",
        "Podfile.lock",
        "Cartfile",
        "Cartfile.resolved",
        "mix.exs",
        "mix.lock",
        "packages.config",
        "Directory.Packages.props",
        "packages.lock.json",
        "paket.dependencies",
        "paket.lock",
        "pubspec.yaml",
        "pubspec.lock",
        "stack.yaml",
        "cabal.project",
        "cabal.project.freeze",
        "vcpkg.json",
        "conanfile.txt",
        "conanfile.py",
        "flake.lock",
        "rebar.config",
        "rebar.lock",
        "build.sbt",
        "project.clj",
        "deps.edn",
        "DESCRIPTION",
        "renv.lock",
        "cpanfile",
        "Makefile.PL",
    ];
    if EXACT.contains(&name) {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    let starts_ends = |p: &str, s: &str| lower.starts_with(p) && lower.ends_with(s);
    starts_ends("requirements", ".txt")
        || starts_ends("requirements", ".in")
        || starts_ends("constraints", ".txt")
        || lower.starts_with("pipfile")
        || lower.starts_with("build.gradle")
        || lower.starts_with("settings.gradle")
        || lower.starts_with("gemfile")
        || lower.ends_with(".gemspec")
        || lower.ends_with(".csproj")
        || lower.ends_with(".fsproj")
        || lower.ends_with(".vbproj")
        || lower.ends_with(".nuspec")
        || lower.ends_with(".cabal")
        || lower.ends_with(".rockspec")
}

const PYTHON_STDLIB: &[&str] = &[
    "__future__",
    "abc",
    "aifc",
    "argparse",
    "array",
    "ast",
    "asynchat",
    "asyncio",
    "asyncore",
    "atexit",
    "audioop",
    "base64",
    "bdb",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "cProfile",
    "calendar",
    "cgi",
    "cgitb",
    "chunk",
    "cmath",
    "cmd",
    "code",
    "codecs",
    "codeop",
    "collections",
    "colorsys",
    "compileall",
    "concurrent",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "crypt",
    "csv",
    "ctypes",
    "curses",
    "dataclasses",
    "datetime",
    "dbm",
    "decimal",
    "difflib",
    "dis",
    "distutils",
    "doctest",
    "email",
    "encodings",
    "ensurepip",
    "enum",
    "errno",
    "faulthandler",
    "fcntl",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "gc",
    "genericpath",
    "getopt",
    "getpass",
    "gettext",
    "glob",
    "graphlib",
    "grp",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "imaplib",
    "imghdr",
    "imp",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "lib2to3",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "mailbox",
    "mailcap",
    "marshal",
    "math",
    "mimetypes",
    "mmap",
    "modulefinder",
    "msilib",
    "msvcrt",
    "multiprocessing",
    "netrc",
    "nis",
    "nntplib",
    "nt",
    "ntpath",
    "nturl2path",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "ossaudiodev",
    "pathlib",
    "pdb",
    "pickle",
    "pickletools",
    "pipes",
    "pkgutil",
    "platform",
    "plistlib",
    "poplib",
    "posix",
    "posixpath",
    "pprint",
    "profile",
    "pstats",
    "pty",
    "pwd",
    "py_compile",
    "pyclbr",
    "pydoc",
    "pydoc_data",
    "pyexpat",
    "queue",
    "quopri",
    "random",
    "re",
    "readline",
    "reprlib",
    "resource",
    "rlcompleter",
    "runpy",
    "sched",
    "secrets",
    "select",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "signal",
    "site",
    "smtpd",
    "smtplib",
    "sndhdr",
    "socket",
    "socketserver",
    "spwd",
    "sqlite3",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "ssl",
    "stat",
    "statistics",
    "string",
    "stringprep",
    "struct",
    "subprocess",
    "sunau",
    "symtable",
    "sys",
    "sysconfig",
    "syslog",
    "tabnanny",
    "tarfile",
    "telnetlib",
    "tempfile",
    "termios",
    "textwrap",
    "threading",
    "time",
    "timeit",
    "tkinter",
    "token",
    "tokenize",
    "tomllib",
    "trace",
    "traceback",
    "tracemalloc",
    "tty",
    "turtle",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "urllib",
    "uu",
    "uuid",
    "venv",
    "warnings",
    "wave",
    "weakref",
    "webbrowser",
    "winreg",
    "winsound",
    "wsgiref",
    "xdrlib",
    "xml",
    "xmlrpc",
    "zipapp",
    "zipfile",
    "zipimport",
    "zlib",
    "zoneinfo",
];

const NODE_BUILTINS: &[&str] = &[
    "assert",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "domain",
    "events",
    "fs",
    "http",
    "http2",
    "https",
    "inspector",
    "module",
    "net",
    "os",
    "path",
    "perf_hooks",
    "process",
    "punycode",
    "querystring",
    "readline",
    "repl",
    "stream",
    "string_decoder",
    "sys",
    "timers",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
];

const RUST_BUILTIN: &[&str] = &[
    "std",
    "core",
    "alloc",
    "proc_macro",
    "test",
    "crate",
    "self",
    "super",
];

/// The dependency an import names, as the unit `allowed_dependencies` speaks in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Imported {
    /// Standard library, relative or in-crate: never a new dependency.
    Builtin,
    /// A third-party (or first-party, we cannot tell) top-level module / crate / package.
    External(String),
}

static PY_IMPORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*import\s+(.+)$").expect("static regex"));
static PY_FROM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*from\s+(\S+)\s+import\b").expect("static regex"));
static RS_USE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+:*\{?\s*([A-Za-z_][A-Za-z0-9_]*)")
        .expect("static regex")
});
static RS_EXTERN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*extern\s+crate\s+([A-Za-z_][A-Za-z0-9_]*)").expect("static regex")
});
static GO_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s*(?:import\s+)?(?:[A-Za-z_][A-Za-z0-9_]*\s+|[._]\s+)?"([^"]+)"\s*\)?\s*$"#)
        .expect("static regex")
});
static JS_FROM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*|^\s*import\s+)["']([^"']+)["']"#)
        .expect("static regex")
});

/// A JavaScript/TypeScript import *statement* (not a dynamic `import()` or a `require` buried
/// in an expression): `import … from "m"`, `import "m"`, `export … from "m"`, and
/// `const x = require("m");` alone on its line.
static JS_IMPORT_STATEMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"^\s*(?:import\s*(?:type\s+)?[\w$*{"']"#,
        r#"|export\b.*\bfrom\s*["']"#,
        r#"|(?:const|let|var)\s+[^=]+=\s*require\s*\(\s*["'][^"']+["']\s*\)\s*;?\s*$)"#,
    ))
    .expect("static regex")
});

/// Whether the line is an import statement and nothing else, so its words (a module named
/// `assert`, `should`…) are names, not code that runs.
pub(crate) fn is_import_statement(line: &str, lang: Lang) -> bool {
    match lang {
        Lang::Js => JS_IMPORT_STATEMENT.is_match(line),
        // These patterns are anchored at the start of the line and only match import forms.
        Lang::Python | Lang::Rust | Lang::Go => !imports_on_line(line, lang).is_empty(),
        _ => false,
    }
}

/// The modules one line imports (empty when it is not an import line).
pub(crate) fn imports_on_line(line: &str, lang: Lang) -> Vec<Imported> {
    let mut out = Vec::new();
    match lang {
        Lang::Python => {
            if let Some(c) = PY_FROM.captures(line) {
                let m = &c[1];
                out.push(if m.starts_with('.') {
                    Imported::Builtin
                } else {
                    py_top(m)
                });
            } else if let Some(c) = PY_IMPORT.captures(line) {
                for item in c[1].split(',') {
                    let m = item.split_whitespace().next().unwrap_or("");
                    let m = m.trim_matches(|c| c == '(' || c == ')');
                    if !m.is_empty() {
                        out.push(py_top(m));
                    }
                }
            }
        }
        Lang::Rust => {
            let c = RS_USE.captures(line).or_else(|| RS_EXTERN.captures(line));
            if let Some(c) = c {
                let top = &c[1];
                out.push(if RUST_BUILTIN.contains(&top) {
                    Imported::Builtin
                } else {
                    Imported::External(top.to_string())
                });
            }
        }
        Lang::Go => {
            if let Some(c) = GO_IMPORT.captures(line) {
                let p = &c[1];
                let first = p.split('/').next().unwrap_or(p);
                // Go's convention: standard packages have no dot in their first element.
                out.push(if first.contains('.') {
                    Imported::External(p.to_string())
                } else {
                    Imported::Builtin
                });
            }
        }
        Lang::Js => {
            for c in JS_FROM.captures_iter(line) {
                out.push(js_package(&c[1]));
            }
        }
        _ => {}
    }
    out
}

fn py_top(module: &str) -> Imported {
    let top = module.split('.').next().unwrap_or(module);
    if PYTHON_STDLIB.contains(&top) {
        Imported::Builtin
    } else {
        Imported::External(top.to_string())
    }
}

fn js_package(spec: &str) -> Imported {
    if spec.starts_with('.') || spec.starts_with('/') || spec.starts_with("node:") {
        return Imported::Builtin;
    }
    let mut parts = spec.split('/');
    let first = parts.next().unwrap_or(spec);
    let name = if first.starts_with('@') {
        match parts.next() {
            Some(second) => format!("{first}/{second}"),
            None => first.to_string(),
        }
    } else {
        first.to_string()
    };
    if NODE_BUILTINS.contains(&name.as_str()) {
        Imported::Builtin
    } else {
        Imported::External(name)
    }
}

/// Every external module a whole file imports.
pub(crate) fn external_imports(content: &str, lang: Lang) -> BTreeSet<String> {
    content
        .lines()
        .flat_map(|l| imports_on_line(l, lang))
        .filter_map(|i| match i {
            Imported::External(n) => Some(n),
            Imported::Builtin => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(line: &str, lang: Lang) -> Vec<Imported> {
        imports_on_line(line, lang)
    }
    fn e(s: &str) -> Imported {
        Imported::External(s.to_string())
    }

    #[test]
    fn manifests_by_name() {
        for p in [
            "Cargo.toml",
            "crates/x/Cargo.toml",
            "requirements-dev.txt",
            "Pipfile.lock",
            "build.gradle.kts",
            "web/package-lock.json",
            "go.sum",
            "app.gemspec",
        ] {
            assert!(is_dependency_manifest(p), "{p}");
        }
        for p in ["src/cargo.rs", "requirements.md", "docs/package.md"] {
            assert!(!is_dependency_manifest(p), "{p}");
        }
    }

    #[test]
    fn python_imports() {
        assert_eq!(
            ext("import os, sys", Lang::Python),
            vec![Imported::Builtin; 2]
        );
        assert_eq!(ext("import numpy as np", Lang::Python), vec![e("numpy")]);
        assert_eq!(
            ext("from requests.adapters import X", Lang::Python),
            vec![e("requests")]
        );
        assert_eq!(
            ext("from .models import X", Lang::Python),
            vec![Imported::Builtin]
        );
        assert_eq!(ext("x = 1", Lang::Python), vec![]);
    }

    #[test]
    fn rust_go_js_imports() {
        assert_eq!(ext("use std::fmt;", Lang::Rust), vec![Imported::Builtin]);
        assert_eq!(ext("use crate::a::b;", Lang::Rust), vec![Imported::Builtin]);
        assert_eq!(ext("use serde::{Serialize};", Lang::Rust), vec![e("serde")]);
        assert_eq!(ext("extern crate libc;", Lang::Rust), vec![e("libc")]);
        assert_eq!(ext("\t\"os\"", Lang::Go), vec![Imported::Builtin]);
        assert_eq!(
            ext("\tx \"github.com/a/b\"", Lang::Go),
            vec![e("github.com/a/b")]
        );
        assert_eq!(
            ext("import x from \"lodash/fp\";", Lang::Js),
            vec![e("lodash")]
        );
        assert_eq!(
            ext("import \"@scope/pkg/x\";", Lang::Js),
            vec![e("@scope/pkg")]
        );
        assert_eq!(
            ext("const a = require('fs')", Lang::Js),
            vec![Imported::Builtin]
        );
        assert_eq!(
            ext("import { a } from './a'", Lang::Js),
            vec![Imported::Builtin]
        );
        assert_eq!(
            ext("import fs from \"node:fs\"", Lang::Js),
            vec![Imported::Builtin]
        );
    }

    #[test]
    fn import_statements_are_whole_lines_that_only_import() {
        for (line, lang) in [
            ("const assert = require('assert');", Lang::Js),
            ("import * as assert from \"node:assert\";", Lang::Js),
            ("import type { A } from './a'", Lang::Js),
            ("import 'should';", Lang::Js),
            ("export { assert } from 'chai';", Lang::Js),
            ("\t\"github.com/stretchr/testify/assert\"", Lang::Go),
            ("import \"github.com/stretchr/testify/assert\"", Lang::Go),
            ("from numpy.testing import assert_allclose", Lang::Python),
            ("use pretty_assertions::assert_eq;", Lang::Rust),
        ] {
            assert!(is_import_statement(line, lang), "{line}");
        }
        for (line, lang) in [
            ("expect(require('./y')).toBe(1);", Lang::Js),
            ("const m = await import('assert');", Lang::Js),
            ("assert.ok(x);", Lang::Js),
            ("\tassert.Equal(t, \"a\", b)", Lang::Go),
            ("assert x == 1", Lang::Python),
            ("assert_eq!(a, b);", Lang::Rust),
        ] {
            assert!(!is_import_statement(line, lang), "{line}");
        }
    }
}
