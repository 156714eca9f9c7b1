//! A generator of realistic GitHub Actions job logs, streamed through `std::io::Read` so a log
//! of any size is never materialised: timestamps on every line, `##[group]` steps, ANSI colour,
//! `\r` progress bars, cargo/npm/pytest/go noise, and now and then a real error block (rustc,
//! tsc, pytest, ESLint, go test). Deterministic (a fixed xorshift seed) so runs compare.
//!
//! A 4 MiB pool of generated lines is built once and streamed in a cycle, so generating costs
//! (almost) nothing next to parsing and memory stays flat whatever the size asked for.

use std::io::Read;

pub struct LogGen {
    remaining: u64,
    buf: Vec<u8>,
    pos: usize,
    rng: u64,
    line: u64,
}

const POOL: usize = 4 * 1024 * 1024;

impl LogGen {
    pub fn new(size_bytes: u64) -> Self {
        let mut g = LogGen {
            remaining: size_bytes,
            buf: Vec::with_capacity(POOL + 64 * 1024),
            pos: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
            line: 0,
        };
        g.refill();
        g
    }

    fn next(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }

    fn stamp(&mut self) {
        let secs = self.line / 50;
        let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
        let frac = (self.line * 7919) % 10_000_000;
        self.buf
            .extend_from_slice(format!("2025-04-16T{h:02}:{m:02}:{s:02}.{frac:07}Z ").as_bytes());
    }

    fn push_line(&mut self, text: &str) {
        self.line += 1;
        self.stamp();
        self.buf.extend_from_slice(text.as_bytes());
        self.buf.push(b'\n');
    }

    fn refill(&mut self) {
        self.buf.clear();
        self.pos = 0;
        while self.buf.len() < POOL {
            let r = self.next();
            let n = self.line;
            match r % 1000 {
                0..=299 => {
                    let krate =
                        ["serde", "tokio", "regex", "memchr", "hyper", "syn"][(r % 6) as usize];
                    self.push_line(&format!(
                        "\u{1b}[1m\u{1b}[92m   Compiling\u{1b}[0m {krate} v1.{}.{}",
                        r % 40,
                        n % 17
                    ));
                }
                300..=449 => self.push_line(&format!(
                    "tests/test_module_{}.py::test_case_{} PASSED                      [{:>3}%]",
                    r % 50,
                    n % 400,
                    n % 100
                )),
                450..=549 => self.push_line(&format!(
                    "npm warn deprecated package-{}@{}.0.0: This package is no longer supported.",
                    r % 300,
                    r % 9
                )),
                550..=619 => self.push_line(&format!(
                    "Downloading {}%\r{}%\r100% |{}| 12.3 MB/s",
                    r % 50,
                    50 + r % 50,
                    "#".repeat(30)
                )),
                620..=689 => self.push_line(&format!("=== RUN   TestThing{}", n % 500)),
                690..=759 => self.push_line(&format!("--- PASS: TestThing{} (0.00s)", n % 500)),
                760..=799 => self.push_line(&format!(
                    "ok  \texample.com/project/pkg{}\t0.{:03}s",
                    r % 30,
                    r % 1000
                )),
                800..=849 => self.push_line(""),
                850..=899 => self.push_line(&format!(
                    "\u{1b}[36;1m  echo \"step {}: building target {}\"\u{1b}[0m",
                    n,
                    r % 77
                )),
                900..=929 => {
                    self.push_line(&format!(
                        "##[group]Run cargo build --release -p crate{}",
                        r % 9
                    ));
                    self.push_line("shell: /usr/bin/bash -e {0}");
                    self.push_line("##[endgroup]");
                }
                930..=989 => self.push_line(&format!(
                    "[command]/usr/bin/git -c protocol.version=2 fetch --no-tags origin +{:040x}",
                    r
                )),
                _ => {
                    self.error_block(r);
                    // A step that fails ends with the runner's verdict: without it the parser
                    // takes the step's errors as tolerated (it passed).
                    self.push_line("##[error]Process completed with exit code 1.");
                }
            }
        }
    }

    /// One real error every ~100 lines on average (but most logs are much quieter).
    fn error_block(&mut self, r: u64) {
        let l = 1 + (r >> 20) % 900;
        let f = (r >> 8) % 200;
        match (r >> 4) % 5 {
            0 => {
                self.push_line(
                    "\u{1b}[1m\u{1b}[91merror[E0308]\u{1b}[0m\u{1b}[1m: mismatched types\u{1b}[0m"
                );
                self.push_line(&format!(
                    "   \u{1b}[1m\u{1b}[94m--> \u{1b}[0msrc/module{f}.rs:{l}:9"
                ));
                self.push_line("    |");
                self.push_line(&format!("{l:>3} |     let x: u32 = \"s\";"));
                self.push_line("    |                  ^^^ expected `u32`, found `&str`");
                self.push_line("");
            }
            1 => self.push_line(&format!(
                "src/components/view{f}.ts({l},14): error TS2322: Type 'string' is not assignable to type 'number'."
            )),
            2 => {
                self.push_line(&format!("/home/runner/work/R/R/src/lib{f}.js"));
                self.push_line(&format!(
                    "  {l}:7  error  'x' is assigned a value but never used  no-unused-vars"
                ));
                self.push_line("");
            }
            3 => {
                self.push_line("=================================== FAILURES ===================================");
                self.push_line(&format!("_______________________________ test_case_{f} ________________________________"));
                self.push_line("    def test_case():");
                self.push_line(">       assert add(1, 2) == 4");
                self.push_line("E       assert 3 == 4");
                self.push_line(&format!("tests/test_mod{f}.py:{l}: AssertionError"));
                self.push_line("=========================== short test summary info ============================");
                self.push_line(&format!("FAILED tests/test_mod{f}.py::test_case_{f} - assert 3 == 4"));
                self.push_line("============================== 1 failed in 0.03s ===============================");
            }
            _ => {
                self.push_line(&format!("--- FAIL: TestCalc{f} (0.00s)"));
                self.push_line(&format!("    calc{f}_test.go:{l}: got 3, want 4"));
                self.push_line("FAIL");
            }
        }
    }
}

impl Read for LogGen {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.remaining == 0 {
            return Ok(0);
        }
        if self.pos >= self.buf.len() {
            self.pos = 0;
        }
        let avail = &self.buf[self.pos..];
        let n = avail.len().min(out.len()).min(self.remaining as usize);
        out[..n].copy_from_slice(&avail[..n]);
        self.pos += n;
        self.remaining -= n as u64;
        Ok(n)
    }
}
