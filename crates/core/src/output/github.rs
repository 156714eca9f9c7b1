//! GitHub Actions workflow commands: one `::error`/`::warning`/`::notice` line per report, so a
//! workflow step annotates the pull request's lines without the App.
//!
//! The escaping is the runner's own: `actions/toolkit` `packages/core/src/command.ts`
//! (`escapeData`, `escapeProperty`) writes it and `actions/runner`
//! `src/Runner.Common/ActionCommand.cs` (`UnescapeData`, `UnescapeProperty`) reads it back. In
//! the message `%`, `\r` and `\n` are escaped; in a property also `:` and `,`, since those end
//! the command name and separate the properties. `%` is escaped first so an escape sequence
//! already in the text survives the round trip.
//!
//! The level: `notice` when the parser was unsure of the location (confidence below
//! [`NOTICE_BELOW`]: a file without a line, a generic "error at" guess), `warning` for linter
//! findings, `error` for the rest, the same split as the SARIF output's levels.
//!
//! [`try_parse_v2`] is the runner's reader, ported, so tests check what GitHub will read.
//!
//! Pure: builds and reads strings; never writes them.

use ci_medic_parser::{BugReport, BugType};

use crate::formatter::fix_description;

/// Reports whose confidence is below this become `notice` annotations: shown, but not claimed
/// to be the failure.
pub const NOTICE_BELOW: f64 = 0.6;

/// The annotation level of a workflow command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Notice,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Notice => "notice",
        }
    }
}

/// The level a report is annotated at.
pub fn level(report: &BugReport) -> Level {
    if report.confidence_score < NOTICE_BELOW {
        Level::Notice
    } else if report.error_type == BugType::Linting {
        Level::Warning
    } else {
        Level::Error
    }
}

/// A command's message, escaped as `escapeData` does.
pub fn escape_data(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
    out
}

/// A property's value, escaped as `escapeProperty` does.
pub fn escape_property(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' => out.push_str("%3A"),
            ',' => out.push_str("%2C"),
            c => out.push(c),
        }
    }
    out
}

/// The annotation's title: the bug type, the tool's rule when there is one, and the fix.
pub fn title(report: &BugReport) -> String {
    let what = match (&report.tool, &report.rule) {
        (Some(tool), Some(rule)) => format!("{} ({tool} {rule})", report.error_type),
        (Some(tool), None) => format!("{} ({tool})", report.error_type),
        (None, Some(rule)) => format!("{} ({rule})", report.error_type),
        (None, None) => report.error_type.as_str().to_string(),
    };
    format!("{what} → Fix: {}", fix_description(report))
}

/// One workflow command for one report, without the line ending.
pub fn command(report: &BugReport) -> String {
    // The runner trims the property list at both ends, so it starts with the title (which
    // starts with the bug type) and ends with a number: no value can lose a space.
    let mut props = vec![
        ("title", title(report)),
        ("file", report.file_path.clone()),
        ("line", report.line_number.max(1).to_string()),
    ];
    if let Some(col) = report.column {
        props.push(("col", col.max(1).to_string()));
    }
    let mut message = if report.message.trim().is_empty() {
        report.error_type.as_str().to_string()
    } else {
        report.message.clone()
    };
    if let Some(test) = &report.test_name {
        message.push_str("\nFailing test: ");
        message.push_str(test);
    }
    let props: Vec<String> = props
        .into_iter()
        .map(|(k, v)| format!("{k}={}", escape_property(&v)))
        .collect();
    format!(
        "::{} {}::{}",
        level(report).as_str(),
        props.join(","),
        escape_data(&message)
    )
}

/// Every report as a workflow command, one per line. GitHub shows at most ten error and ten
/// warning annotations per step (fifty per job); the order is the parser's, which puts the
/// first failure first.
pub fn commands(reports: &[BugReport]) -> String {
    let mut out = String::new();
    for r in reports {
        out.push_str(&command(r));
        out.push('\n');
    }
    out
}

/// The runner's `_escapeDataMappings`, in its order: how it reads a message back.
pub const DATA_ESCAPES: [(&str, &str); 3] = [("\r", "%0D"), ("\n", "%0A"), ("%", "%25")];
/// The runner's `_escapePropertyMappings`, in its order: how it reads a property back.
pub const PROPERTY_ESCAPES: [(&str, &str); 5] = [
    ("\r", "%0D"),
    ("\n", "%0A"),
    (":", "%3A"),
    (",", "%2C"),
    ("%", "%25"),
];

/// The runner's `UnescapeData` / `UnescapeProperty`: one replacement after another, in the
/// mappings' order (so `%25` is undone last).
pub fn unescape(escaped: &str, mappings: &[(&str, &str)]) -> String {
    let mut s = escaped.to_string();
    for (token, replacement) in mappings {
        s = s.replace(replacement, token);
    }
    s
}

/// A workflow command as the runner reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionCommand {
    pub command: String,
    /// Keys in lower case: the runner's dictionary ignores their case.
    pub properties: std::collections::HashMap<String, String>,
    pub data: String,
}

/// The runner's `ActionCommand.TryParseV2` for the annotation commands, ported from
/// `actions/runner` `src/Runner.Common/ActionCommand.cs`: what GitHub will make of a line this
/// module prints (`None`: not an annotation command, printed as text).
pub fn try_parse_v2(line: &str) -> Option<ActionCommand> {
    let message = line.trim_start();
    let rest = message.strip_prefix("::")?;
    let end = rest.find("::")?;
    let cmd_info = &rest[..end];
    let (name, props) = match cmd_info.find(' ') {
        Some(i) => (&cmd_info[..i], Some(&cmd_info[i + 1..])),
        None => (cmd_info, None),
    };
    if ![Level::Error, Level::Warning, Level::Notice]
        .iter()
        .any(|l| l.as_str() == name)
    {
        return None;
    }
    let mut properties = std::collections::HashMap::new();
    if let Some(props) = props {
        // `Split(',', RemoveEmptyEntries)`, then `Split('=', count: 2, RemoveEmptyEntries)`.
        for p in props.trim().split(',').filter(|p| !p.is_empty()) {
            let pair: Vec<&str> = p.splitn(2, '=').filter(|s| !s.is_empty()).collect();
            if let [key, value] = pair[..] {
                properties.insert(key.to_ascii_lowercase(), unescape(value, &PROPERTY_ESCAPES));
            }
        }
    }
    Some(ActionCommand {
        command: name.to_string(),
        properties,
        data: unescape(&rest[end + 2..], &DATA_ESCAPES),
    })
}
