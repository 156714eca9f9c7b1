//! A small line diff: which lines of the *before* file a patch touches, and a unified diff for
//! people to read on the PR comment.
//!
//! Lines are compared with their endings, so a patch that flips CRLF to LF shows up as changed
//! lines (and is refused by the guard when it reaches outside the window). The diff itself is
//! Myers' algorithm from `similar` (O((N+M)·D), where the hand-written LCS table it replaced was
//! O(N·M) and gave up on large files by calling the whole middle changed).

use super::text::{Line, split_lines};

/// One step of an edit script over line indices (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Equal {
        before: usize,
        after: usize,
    },
    Delete {
        before: usize,
    },
    /// Insert after-line `after` just before before-line `at` (`at == before.len()` appends).
    Insert {
        at: usize,
        after: usize,
    },
}

/// The edit script from `a` to `b`, one op per line, by Myers' algorithm (`similar`). A
/// replaced run is its deletions followed by its insertions at the run's end.
pub(crate) fn diff_lines(a: &[Line], b: &[Line]) -> Vec<Op> {
    use similar::DiffOp;
    let mut ops = Vec::with_capacity(a.len().max(b.len()));
    let inserts = |ops: &mut Vec<Op>, at: usize, new_index: usize, new_len: usize| {
        ops.extend((new_index..new_index + new_len).map(|after| Op::Insert { at, after }));
    };
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, a, b) {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => ops.extend((0..len).map(|k| Op::Equal {
                before: old_index + k,
                after: new_index + k,
            })),
            DiffOp::Delete {
                old_index, old_len, ..
            } => ops.extend((old_index..old_index + old_len).map(|before| Op::Delete { before })),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => inserts(&mut ops, old_index, new_index, new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                ops.extend((old_index..old_index + old_len).map(|before| Op::Delete { before }));
                inserts(&mut ops, old_index + old_len, new_index, new_len);
            }
        }
    }
    ops
}

/// What a patch did to the before file, in 1-based before-line terms.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Touched {
    /// Before lines deleted or replaced.
    pub deleted: Vec<u32>,
    /// Insertion points: `k` means "between before line `k` and `k + 1`" (0 = before line 1).
    pub inserted_at: Vec<u32>,
    /// After-file lines that are new (1-based), for rules that look at added text.
    pub added: Vec<u32>,
}

pub(crate) fn touched(before: &str, after: &str) -> Touched {
    let (a, b) = (split_lines(before), split_lines(after));
    let mut t = Touched::default();
    for op in diff_lines(&a, &b) {
        match op {
            Op::Equal { .. } => {}
            Op::Delete { before } => t.deleted.push(before as u32 + 1),
            Op::Insert { at, after } => {
                if t.inserted_at.last() != Some(&(at as u32)) {
                    t.inserted_at.push(at as u32);
                }
                t.added.push(after as u32 + 1);
            }
        }
    }
    t
}

/// A unified diff (3 lines of context) of one file, `a/` and `b/` prefixed, as `git diff` prints
/// it. Empty when nothing changed. `before == None` is a new file.
pub fn unified_diff(path: &str, before: Option<&str>, after: &str) -> String {
    let before_text = before.unwrap_or("");
    if before == Some(after) {
        return String::new();
    }
    let (a, b) = (split_lines(before_text), split_lines(after));
    let ops = diff_lines(&a, &b);
    let mut out = String::new();
    out.push_str(&match before {
        Some(_) => format!("--- a/{path}\n"),
        None => "--- /dev/null\n".to_string(),
    });
    out.push_str(&format!("+++ b/{path}\n"));
    const CTX: usize = 3;
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(op, Op::Equal { .. }))
        .map(|(i, _)| i)
        .collect();
    let mut k = 0;
    while k < changed.len() {
        // Grow a hunk while the next change is within 2*CTX equal lines of the last one.
        let start = changed[k].saturating_sub(CTX);
        let mut end = changed[k];
        while k + 1 < changed.len() && changed[k + 1] - end <= 2 * CTX + 1 {
            k += 1;
            end = changed[k];
        }
        let end = (end + CTX + 1).min(ops.len());
        k += 1;
        let hunk = &ops[start..end];
        let (mut a_start, mut b_start) = (None, None);
        let (mut a_len, mut b_len) = (0, 0);
        for op in hunk {
            match *op {
                Op::Equal { before, after } => {
                    a_start.get_or_insert(before);
                    b_start.get_or_insert(after);
                    a_len += 1;
                    b_len += 1;
                }
                Op::Delete { before } => {
                    a_start.get_or_insert(before);
                    a_len += 1;
                }
                Op::Insert { at, after } => {
                    b_start.get_or_insert(after);
                    // A pure insertion hunk starts after the line before it.
                    if a_start.is_none() && a_len == 0 {
                        a_start = Some(at);
                    }
                    b_len += 1;
                }
            }
        }
        let fmt_start = |s: Option<usize>, len: usize| match (s, len) {
            (Some(s), 0) => s,
            (Some(s), _) => s + 1,
            (None, _) => 0,
        };
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            fmt_start(a_start, a_len),
            a_len,
            fmt_start(b_start, b_len),
            b_len
        ));
        for op in hunk {
            let (mark, line) = match *op {
                Op::Equal { before, .. } => (' ', &a[before]),
                Op::Delete { before } => ('-', &a[before]),
                Op::Insert { after, .. } => ('+', &b[after]),
            };
            out.push(mark);
            out.push_str(&line.text);
            if line.eol == "\r\n" {
                out.push('\r');
            }
            out.push('\n');
            if line.eol.is_empty() {
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_lines_of_a_one_line_edit() {
        let t = touched("a\nb\nc\nd\n", "a\nB\nc\nd\n");
        assert_eq!(t.deleted, vec![2]);
        assert_eq!(t.inserted_at, vec![2]);
        assert_eq!(t.added, vec![2]);
    }

    #[test]
    fn a_deleted_line_and_an_insertion() {
        let t = touched("a\nb\nc\n", "a\nc\nx\n");
        assert_eq!(t.deleted, vec![2]);
        assert_eq!(t.inserted_at, vec![3]);
        assert_eq!(t.added, vec![3]);
    }

    #[test]
    fn adding_the_final_newline_touches_the_last_line() {
        let t = touched("a\nb", "a\nb\n");
        assert_eq!(t.deleted, vec![2]);
    }

    #[test]
    fn unified_diff_matches_git_layout() {
        let d = unified_diff(
            "x.py",
            Some("1\n2\n3\n4\n5\n6\n7\n8\n"),
            "1\n2\n3\n4\nV\n6\n7\n8\n",
        );
        assert_eq!(
            d,
            "--- a/x.py\n+++ b/x.py\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+V\n 6\n 7\n 8\n"
        );
        assert_eq!(unified_diff("x", Some("a\n"), "a\n"), "");
        let nl = unified_diff("x", Some("a"), "a\n");
        assert!(
            nl.contains("-a\n\\ No newline at end of file\n+a\n"),
            "{nl}"
        );
        let new = unified_diff("n.txt", None, "z\n");
        assert_eq!(new, "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,1 @@\n+z\n");
    }

    #[test]
    fn a_large_file_with_one_edit_is_one_edit() {
        // 5,000 lines: 25 million cells, past the old LCS table's limit, which then called
        // every line between the common prefix and suffix changed.
        let before: String = (0..5_000).map(|i| format!("line {i}\n")).collect();
        let after = before
            .replace("line 10\n", "line ten\n")
            .replace("line 4990\n", "line 4990 changed\n");
        let t = touched(&before, &after);
        assert_eq!(t.deleted, vec![11, 4991]);
        assert_eq!(t.added, vec![11, 4991]);
    }

    #[test]
    fn a_replaced_run_is_deleted_then_inserted() {
        let a: Vec<Line> = split_lines("x\ny\n");
        let b: Vec<Line> = split_lines("p\nq\n");
        let ops = diff_lines(&a, &b);
        assert_eq!(
            ops.iter()
                .filter(|o| matches!(o, Op::Delete { .. }))
                .count(),
            2
        );
        assert_eq!(
            ops.iter()
                .filter(|o| matches!(o, Op::Insert { .. }))
                .count(),
            2
        );
    }
}
