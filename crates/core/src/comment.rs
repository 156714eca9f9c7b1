//! (being built)

/// Wraps `text` in an inline code span that nothing inside can close.
pub fn inline_code(text: &str) -> String {
    let text: String = neutralize_mentions(text)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let longest = longest_run(&text, '`');
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') || text.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for ch in text.chars() {
        if ch == c {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

pub fn neutralize_mentions(text: &str) -> String {
    text.replace('@', "@\u{200D}")
}
