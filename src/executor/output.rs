//! What people are shown of a build's output: the marker put where the capture
//! ([`crate::capped_log::CappedLog`]) dropped bytes, and the short excerpt of the first and
//! last lines. It never interprets what it shows (that is the parser's job).

/// The line put where output was dropped. Starts with a newline-terminated line of its own so
/// the parser never glues the two halves into one fake line.
pub fn omission_marker(omitted_bytes: u64) -> String {
    format!("[ci-medic: {omitted_bytes} bytes of output omitted]\n")
}

/// Longest line kept in an excerpt, in characters; longer ones end with `…`.
const EXCERPT_LINE_CHARS: usize = 400;

/// The first `head_lines` and the last `tail_lines` lines of `log`, with a marker line saying how
/// many were left out between them. A log that fits is returned whole (lines still clipped).
pub fn build_excerpt(log: &str, head_lines: usize, tail_lines: usize) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let clip = |l: &str| -> String {
        match l.char_indices().nth(EXCERPT_LINE_CHARS) {
            Some((i, _)) => format!("{}…", &l[..i]),
            None => l.to_owned(),
        }
    };
    let mut out = Vec::new();
    if lines.len() <= head_lines + tail_lines {
        out.extend(lines.iter().map(|l| clip(l)));
    } else {
        out.extend(lines[..head_lines].iter().map(|l| clip(l)));
        out.push(format!(
            "… {} lines omitted …",
            lines.len() - head_lines - tail_lines
        ));
        out.extend(lines[lines.len() - tail_lines..].iter().map(|l| clip(l)));
    }
    let mut text = out.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_of_a_short_log_is_the_log() {
        assert_eq!(build_excerpt("a\nb\nc\n", 2, 2), "a\nb\nc\n");
        assert_eq!(build_excerpt("", 2, 2), "");
    }

    #[test]
    fn excerpt_keeps_first_and_last_lines() {
        let log: String = (1..=100).map(|i| format!("{i}\n")).collect();
        let ex = build_excerpt(&log, 3, 2);
        assert_eq!(ex, "1\n2\n3\n… 95 lines omitted …\n99\n100\n");
    }

    #[test]
    fn excerpt_clips_long_lines_on_char_boundaries() {
        let long = "é".repeat(1000);
        let ex = build_excerpt(&long, 1, 1);
        assert_eq!(ex.chars().count(), EXCERPT_LINE_CHARS + 2);
        assert!(ex.ends_with("…\n"));
    }
}
