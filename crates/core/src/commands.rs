//! Slash commands read from pull-request comments: `/approve`, `/reject`, `/retry`, `/rerun`,
//! `/help`.
//!
//! [`parse_commands`] is a pure function from a comment body to the commands it holds, in order,
//! each either a [`Command`] or a [`CommandError`] the caller answers with [`usage_reply`].
//!
//! A command counts only when its `/` is the first non-blank character of a line of ordinary
//! text. Anything inside fenced or indented code blocks, inline code, block quotes (nested ones
//! too), HTML (blocks, inline tags, comments) and link or image text is never a command: ci-medic's
//! own comments quote logs that may contain `/approve`, and people quote each other.
//!
//! Unknown slash words are reported only when they look like a misspelt ci-medic command
//! (`/aprove`, `/approve2`); other slash words (`/lgtm`, `/cc`, `/usr/bin/ls`) belong to other
//! bots or are paths, and are ignored silently so ci-medic never answers what was not meant for it.
//!
//! This module must never do I/O, look at who wrote the comment (edits and bot comments are
//! filtered by the caller), or resolve an omitted id (the caller picks the newest open proposal).

use crate::ids::FixDdsId;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The longest `/reject` reason accepted, in characters. Longer ones are an error rather than
/// silently cut, so the maintainer knows what was recorded.
pub const MAX_REASON_CHARS: usize = 1000;

/// User text quoted back in an error is cut to this many characters.
const MAX_QUOTED_CHARS: usize = 60;

/// A command addressed to ci-medic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Approve a proposal. `None`: the newest open proposal on the pull request.
    Approve { id: Option<FixDdsId> },
    /// Reject a proposal, with an optional free-text reason (the rest of the line).
    Reject {
        id: Option<FixDdsId>,
        reason: Option<String>,
    },
    /// Analyse the latest failure of the check again.
    Retry,
    /// Re-run the failed GitHub Actions jobs of a failure ci-medic found not to be the code's
    /// fault (infrastructure, flaky).
    Rerun,
    /// Show the commands.
    Help,
}

impl Command {
    pub fn kind(&self) -> CommandKind {
        match self {
            Command::Approve { .. } => CommandKind::Approve,
            Command::Reject { .. } => CommandKind::Reject,
            Command::Retry => CommandKind::Retry,
            Command::Rerun => CommandKind::Rerun,
            Command::Help => CommandKind::Help,
        }
    }
}

/// The command words, without their arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CommandKind {
    Approve,
    Reject,
    Retry,
    Rerun,
    Help,
}

impl CommandKind {
    /// Every command, in the order help lists them. Built from the private `CommandKind::next`, whose
    /// exhaustive `match` makes a new variant a compile error until it is chained in.
    pub const ALL: [CommandKind; 5] = {
        let mut all = [CommandKind::FIRST; 5];
        let mut i = 1;
        while i < all.len() {
            match all[i - 1].next() {
                Some(k) => all[i] = k,
                None => panic!("CommandKind::ALL is longer than the chain of next()"),
            }
            i += 1;
        }
        assert!(
            all[all.len() - 1].next().is_none(),
            "CommandKind::ALL is shorter than the chain of next()"
        );
        all
    };

    const FIRST: CommandKind = CommandKind::Approve;

    /// The next command in help order; `None` after the last.
    const fn next(self) -> Option<CommandKind> {
        match self {
            CommandKind::Approve => Some(CommandKind::Reject),
            CommandKind::Reject => Some(CommandKind::Retry),
            CommandKind::Retry => Some(CommandKind::Rerun),
            CommandKind::Rerun => Some(CommandKind::Help),
            CommandKind::Help => None,
        }
    }

    /// The word after the slash.
    pub const fn name(self) -> &'static str {
        match self {
            CommandKind::Approve => "approve",
            CommandKind::Reject => "reject",
            CommandKind::Retry => "retry",
            CommandKind::Rerun => "rerun",
            CommandKind::Help => "help",
        }
    }

    /// The syntax, as shown in help and usage replies.
    pub const fn usage(self) -> &'static str {
        match self {
            CommandKind::Approve => "/approve [DDS-FIX-YYYYMMDD-NNN]",
            CommandKind::Reject => "/reject [DDS-FIX-YYYYMMDD-NNN] [reason]",
            CommandKind::Retry => "/retry",
            CommandKind::Rerun => "/rerun",
            CommandKind::Help => "/help",
        }
    }

    /// One line saying what it does.
    pub const fn description(self) -> &'static str {
        match self {
            CommandKind::Approve => {
                "let ci-medic write and push the proposed fix (without an id: the newest open proposal on this pull request)"
            }
            CommandKind::Reject => {
                "drop the proposal, optionally saying why (without an id: the newest open proposal)"
            }
            CommandKind::Retry => "analyse the latest failure of the check again",
            CommandKind::Rerun => {
                "re-run the failed GitHub Actions jobs of a failure ci-medic found not to be the code's fault (infrastructure or flaky)"
            }
            CommandKind::Help => "show this list",
        }
    }

    fn from_word(word: &str) -> Option<CommandKind> {
        CommandKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(word))
    }
}

impl std::fmt::Display for CommandKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "/{}", self.name())
    }
}

/// Why a line that was meant for ci-medic could not be read. Quoted user text is cut to a few
/// dozen characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("unknown command `/{word}`{}", suggestion.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    Unknown {
        word: String,
        suggestion: Option<CommandKind>,
    },
    #[error("`{command}`: `{value}` is not a proposal id (expected DDS-FIX-YYYYMMDD-NNN)")]
    InvalidId { command: CommandKind, value: String },
    #[error("`{command}` does not take `{value}` (usage: `{}`)", command.usage())]
    UnexpectedArgument { command: CommandKind, value: String },
    #[error("the reason is {len} characters long; at most {max} are kept")]
    ReasonTooLong { len: usize, max: usize },
}

/// Reads every command in a comment body, in order of appearance.
///
/// Never panics, whatever the input (property-tested).
pub fn parse_commands(body: &str) -> Vec<Result<Command, CommandError>> {
    command_starts(body)
        .into_iter()
        .filter_map(|start| {
            let end = body[start..].find('\n').map_or(body.len(), |i| start + i);
            parse_line(body[start..end].trim_end_matches('\r'))
        })
        .collect()
}

/// Byte offsets of every `/` that begins a line of ordinary text (see the module docs).
fn command_starts(body: &str) -> Vec<usize> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_GFM
        | Options::ENABLE_FOOTNOTES;
    // Containers whose text is never read for commands. A counter, since they nest.
    let mut hidden = 0usize;
    let mut starts = Vec::new();
    for (event, range) in Parser::new_ext(body, options).into_offset_iter() {
        match event {
            Event::Start(
                Tag::CodeBlock(_)
                | Tag::BlockQuote(_)
                | Tag::HtmlBlock
                | Tag::Link { .. }
                | Tag::Image { .. }
                | Tag::MetadataBlock(_),
            ) => hidden += 1,
            Event::End(
                TagEnd::CodeBlock
                | TagEnd::BlockQuote(_)
                | TagEnd::HtmlBlock
                | TagEnd::Link
                | TagEnd::Image
                | TagEnd::MetadataBlock(_),
            ) => hidden = hidden.saturating_sub(1),
            Event::Text(_) if hidden == 0 => {
                let bytes = body.as_bytes();
                for pos in range.clone() {
                    if bytes.get(pos) == Some(&b'/') && at_line_start(body, pos) {
                        starts.push(pos);
                    }
                }
            }
            _ => {}
        }
    }
    starts.sort_unstable();
    starts.dedup();
    starts
}

/// True when only spaces and tabs precede `pos` on its line.
fn at_line_start(body: &str, pos: usize) -> bool {
    body.as_bytes()[..pos]
        .iter()
        .rev()
        .take_while(|&&b| b != b'\n')
        .all(|&b| b == b' ' || b == b'\t')
}

/// Reads one line starting with `/`. `None`: not addressed to ci-medic.
fn parse_line(line: &str) -> Option<Result<Command, CommandError>> {
    let rest = line.strip_prefix('/')?;
    let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let word = &rest[..word_end];
    let args = rest[word_end..].trim();
    if word.is_empty() || word.contains('/') {
        return None;
    }
    let Some(kind) = CommandKind::from_word(word) else {
        let suggestion = suggest(word)?;
        return Some(Err(CommandError::Unknown {
            word: quote(word),
            suggestion: Some(suggestion),
        }));
    };
    Some(match kind {
        CommandKind::Approve => parse_approve(args),
        CommandKind::Reject => parse_reject(args),
        CommandKind::Retry => no_arguments(kind, args).map(|()| Command::Retry),
        CommandKind::Rerun => no_arguments(kind, args).map(|()| Command::Rerun),
        CommandKind::Help => no_arguments(kind, args).map(|()| Command::Help),
    })
}

fn parse_approve(args: &str) -> Result<Command, CommandError> {
    let mut words = args.split_whitespace();
    let id = match words.next() {
        None => None,
        Some(word) => Some(parse_id(CommandKind::Approve, word)?),
    };
    match words.next() {
        None => Ok(Command::Approve { id }),
        Some(extra) => Err(CommandError::UnexpectedArgument {
            command: CommandKind::Approve,
            value: quote(extra),
        }),
    }
}

fn parse_reject(args: &str) -> Result<Command, CommandError> {
    let first_end = args.find(char::is_whitespace).unwrap_or(args.len());
    let first = &args[..first_end];
    let (id, reason) = if looks_like_id(first) {
        (
            Some(parse_id(CommandKind::Reject, first)?),
            args[first_end..].trim(),
        )
    } else {
        (None, args)
    };
    let len = reason.chars().count();
    if len > MAX_REASON_CHARS {
        return Err(CommandError::ReasonTooLong {
            len,
            max: MAX_REASON_CHARS,
        });
    }
    Ok(Command::Reject {
        id,
        reason: (!reason.is_empty()).then(|| reason.to_string()),
    })
}

fn no_arguments(kind: CommandKind, args: &str) -> Result<(), CommandError> {
    match args.split_whitespace().next() {
        None => Ok(()),
        Some(extra) => Err(CommandError::UnexpectedArgument {
            command: kind,
            value: quote(extra),
        }),
    }
}

/// A first `/reject` argument that is meant as an id, well-formed or not.
fn looks_like_id(word: &str) -> bool {
    let upper = word.to_ascii_uppercase();
    upper.starts_with("DDS-") || upper.starts_with("DDS_") || upper.starts_with("#DDS")
}

/// Ids are matched case-insensitively, since the command word is.
fn parse_id(command: CommandKind, word: &str) -> Result<FixDdsId, CommandError> {
    FixDdsId::parse(&word.to_ascii_uppercase()).map_err(|_| CommandError::InvalidId {
        command,
        value: quote(word),
    })
}

/// The command a mistyped word was probably meant to be. `None` when it does not look like one
/// of ours at all.
fn suggest(word: &str) -> Option<CommandKind> {
    if word.len() > 32
        || !word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    CommandKind::ALL
        .into_iter()
        .map(|k| {
            let name = k.name();
            let close = if lower.starts_with(name) || (lower.len() >= 4 && name.starts_with(&lower))
            {
                0
            } else {
                edit_distance(&lower, name)
            };
            (close, k)
        })
        // One edit at most: two would reach other bots' everyday commands (`/retest` is two
        // edits from `/reject`, `/ready` two from `/retry`).
        .filter(|&(d, _)| d <= 1)
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

/// Edit distance counting an adjacent transposition as one edit (optimal string alignment),
/// over bytes: the words compared here are ASCII.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

fn quote(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = chars.by_ref().take(MAX_QUOTED_CHARS).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

/// The `/help` reply: every command with its syntax and purpose.
pub fn help_text() -> String {
    let mut out = String::from(
        "**ci-medic commands** (at the start of a line in a comment on this pull request):\n\n",
    );
    for kind in CommandKind::ALL {
        // Exhaustive on purpose: a new command must decide how help shows it.
        let note = match kind {
            CommandKind::Approve | CommandKind::Reject | CommandKind::Rerun => {
                " — needs the permission set in `.github/ci-medic.yml` (`approvers`)"
            }
            CommandKind::Retry | CommandKind::Help => "",
        };
        out.push_str(&format!(
            "- `{}` — {}{note}\n",
            kind.usage(),
            kind.description()
        ));
    }
    out
}

/// One short reply covering every error of a comment, with the usage of the commands involved.
/// Empty input gives the full help, so the caller never posts an empty comment.
pub fn usage_reply(errors: &[CommandError]) -> String {
    if errors.is_empty() {
        return help_text();
    }
    let mut out = String::from("ci-medic could not read ");
    out.push_str(if errors.len() == 1 {
        "this command:\n\n"
    } else {
        "these commands:\n\n"
    });
    let mut kinds: Vec<CommandKind> = Vec::new();
    for error in errors {
        let (line, kind) = match error {
            CommandError::Unknown { word, suggestion } => (
                format!(
                    "unknown command {}{}",
                    crate::comment::inline_code(&format!("/{word}")),
                    suggestion
                        .map(|s| format!(" — did you mean `/{}`?", s.name()))
                        .unwrap_or_default()
                ),
                *suggestion,
            ),
            CommandError::InvalidId { command, value } => (
                format!(
                    "`{command}`: {} is not a proposal id (expected `DDS-FIX-YYYYMMDD-NNN`, as shown in the proposal comment)",
                    crate::comment::inline_code(value)
                ),
                Some(*command),
            ),
            CommandError::UnexpectedArgument { command, value } => (
                format!(
                    "`{command}` does not take {}",
                    crate::comment::inline_code(value)
                ),
                Some(*command),
            ),
            CommandError::ReasonTooLong { len, max } => (
                format!("the `/reject` reason has {len} characters; keep it under {max}"),
                Some(CommandKind::Reject),
            ),
        };
        out.push_str(&format!("- {line}\n"));
        if let Some(kind) = kind
            && !kinds.contains(&kind)
        {
            kinds.push(kind);
        }
    }
    out.push_str("\nUsage:\n");
    if kinds.is_empty() {
        kinds = CommandKind::ALL.to_vec();
    }
    kinds.sort();
    for kind in kinds {
        out.push_str(&format!("- `{}`\n", kind.usage()));
    }
    out.push_str("\n`/help` lists every command.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "DDS-FIX-20260101-001";

    fn id() -> FixDdsId {
        FixDdsId::parse(ID).unwrap()
    }

    fn ok(body: &str) -> Vec<Command> {
        parse_commands(body)
            .into_iter()
            .map(|r| r.unwrap_or_else(|e| panic!("{body:?}: {e}")))
            .collect()
    }

    #[test]
    fn bare_commands() {
        assert_eq!(ok("/approve"), vec![Command::Approve { id: None }]);
        assert_eq!(
            ok("/reject"),
            vec![Command::Reject {
                id: None,
                reason: None
            }]
        );
        assert_eq!(ok("/retry"), vec![Command::Retry]);
        assert_eq!(ok("/rerun"), vec![Command::Rerun]);
        assert_eq!(ok("/ReRun"), vec![Command::Rerun]);
        assert_eq!(ok("/help"), vec![Command::Help]);
    }

    #[test]
    fn ids() {
        assert_eq!(
            ok(&format!("/approve {ID}")),
            vec![Command::Approve { id: Some(id()) }]
        );
        assert_eq!(
            ok("/approve dds-fix-20260101-001"),
            vec![Command::Approve { id: Some(id()) }]
        );
        for bad in [
            "DDS-FIX-2026-001",
            "DDS-FIX-20260101-1",
            "123",
            "#DDS-FIX-20260101-001",
        ] {
            let got = parse_commands(&format!("/approve {bad}"));
            assert_eq!(
                got,
                vec![Err(CommandError::InvalidId {
                    command: CommandKind::Approve,
                    value: bad.to_string()
                })],
                "{bad}"
            );
            assert!(
                got[0]
                    .as_ref()
                    .unwrap_err()
                    .to_string()
                    .contains("DDS-FIX-YYYYMMDD-NNN")
            );
        }
        assert_eq!(
            parse_commands(&format!("/approve {ID} please")),
            vec![Err(CommandError::UnexpectedArgument {
                command: CommandKind::Approve,
                value: "please".into()
            })]
        );
    }

    #[test]
    fn reject_reasons() {
        assert_eq!(
            ok(&format!("/reject {ID} because it breaks X")),
            vec![Command::Reject {
                id: Some(id()),
                reason: Some("because it breaks X".into())
            }]
        );
        assert_eq!(
            ok("/reject because it  breaks X  "),
            vec![Command::Reject {
                id: None,
                reason: Some("because it  breaks X".into())
            }]
        );
        assert_eq!(
            ok(&format!("/reject {ID}")),
            vec![Command::Reject {
                id: Some(id()),
                reason: None
            }]
        );
        assert_eq!(
            parse_commands("/reject DDS-FIX-bad nope"),
            vec![Err(CommandError::InvalidId {
                command: CommandKind::Reject,
                value: "DDS-FIX-bad".into()
            })]
        );
        assert_eq!(
            ok("/reject ça casse l'API — désolé 🙃"),
            vec![Command::Reject {
                id: None,
                reason: Some("ça casse l'API — désolé 🙃".into())
            }]
        );
        let long = "x".repeat(MAX_REASON_CHARS + 1);
        assert_eq!(
            parse_commands(&format!("/reject {long}")),
            vec![Err(CommandError::ReasonTooLong {
                len: MAX_REASON_CHARS + 1,
                max: MAX_REASON_CHARS
            })]
        );
        assert!(parse_commands(&format!("/reject {}", "é".repeat(MAX_REASON_CHARS)))[0].is_ok());
    }

    #[test]
    fn no_argument_commands_refuse_arguments() {
        for (body, kind) in [
            ("/retry now", CommandKind::Retry),
            ("/rerun all", CommandKind::Rerun),
            ("/help me", CommandKind::Help),
        ] {
            assert_eq!(
                parse_commands(body),
                vec![Err(CommandError::UnexpectedArgument {
                    command: kind,
                    value: body.split(' ').nth(1).unwrap().into()
                })]
            );
        }
    }

    #[test]
    fn case_and_whitespace() {
        assert_eq!(ok("/APPROVE"), vec![Command::Approve { id: None }]);
        assert_eq!(ok("/Retry"), vec![Command::Retry]);
        assert_eq!(ok("   /help   "), vec![Command::Help]);
        assert_eq!(
            ok("/retry\r\n/help\r\n"),
            vec![Command::Retry, Command::Help]
        );
        assert_eq!(
            ok(&format!("/approve\t{ID}\r\n")),
            vec![Command::Approve { id: Some(id()) }]
        );
        // A tab at the start of a paragraph is an indented code block…
        assert_eq!(ok("\t/approve"), vec![]);
        // …but a continuation line of a paragraph is text.
        assert_eq!(
            ok("Looks good to me.\n\t/approve"),
            vec![Command::Approve { id: None }]
        );
    }

    #[test]
    fn several_commands_in_order() {
        let body = format!("Thanks!\n/approve {ID}\n\nAlso:\n/retry\n/aprove\n/help");
        assert_eq!(
            parse_commands(&body),
            vec![
                Ok(Command::Approve { id: Some(id()) }),
                Ok(Command::Retry),
                Err(CommandError::Unknown {
                    word: "aprove".into(),
                    suggestion: Some(CommandKind::Approve)
                }),
                Ok(Command::Help),
            ]
        );
    }

    #[test]
    fn code_is_not_a_command() {
        for body in [
            "```\n/approve\n```",
            "```text\nlog line\n/approve\n```",
            "~~~\n/approve\n~~~",
            "````\n```\n/approve\n````",
            "    /approve",
            "text\n\n    /approve\n",
            "`/approve`",
            "``/approve``",
            "```\nunterminated\n/approve",
        ] {
            assert_eq!(parse_commands(body), vec![], "{body:?}");
        }
    }

    #[test]
    fn quotes_are_not_commands() {
        for body in [
            "> /approve",
            "> quoted\n/approve",
            "> > /approve",
            "> outer\n> > inner\n> > /reject no",
            ">/approve",
            "> - /approve",
        ] {
            // "> quoted\n/approve" is a lazy continuation: still inside the quote.
            assert_eq!(parse_commands(body), vec![], "{body:?}");
        }
        assert_eq!(
            ok("> quoted\n\n/approve"),
            vec![Command::Approve { id: None }]
        );
    }

    #[test]
    fn html_is_not_a_command() {
        for body in [
            "<!-- /approve -->",
            "<!--\n/approve\n-->",
            "<details>\n/approve\n</details>",
            "<div>/approve</div>",
            "<span>/approve</span>",
            "<pre>\n\n/approve\n</pre>",
        ] {
            assert_eq!(parse_commands(body), vec![], "{body:?}");
        }
        // After an HTML block ends (blank line), text is text again.
        assert_eq!(
            ok("<details>\nx\n</details>\n\n/retry"),
            vec![Command::Retry]
        );
    }

    #[test]
    fn only_at_line_start() {
        for body in [
            "please /approve",
            "- /approve",
            "1. /approve",
            "# /approve",
            "**/approve**",
            "\\/approve",
            "[/approve](https://example.com)",
            "| /approve |\n|---|",
            "&#47;approve",
        ] {
            assert_eq!(parse_commands(body), vec![], "{body:?}");
        }
    }

    #[test]
    fn not_commands_at_all() {
        for body in [
            "",
            "   \n\n",
            "/",
            "/ approve",
            "/usr/bin/ls",
            "/etc/passwd is missing",
            "/approve/now",
            "/lgtm",
            "/cc @someone",
            "/assign",
            "／approve",
            "/ａpprove",
            "/éapprove",
        ] {
            assert_eq!(parse_commands(body), vec![], "{body:?}");
        }
    }

    #[test]
    fn other_bots_commands_get_no_answer() {
        // Prow, Mergify, Kodiak, Renovate… commands seen on pull requests.
        for word in [
            "retest",
            "ready",
            "reply",
            "revert",
            "repeat",
            "retag",
            "retitle",
            "reopen",
            "rebase",
            "hold",
            "unhold",
            "test",
            "lgtm",
            "ok-to-test",
            "cc",
            "assign",
            "close",
            "merge",
            "queue",
            "refresh",
        ] {
            assert_eq!(parse_commands(&format!("/{word}")), vec![], "/{word}");
        }
    }

    #[test]
    fn misspellings_get_a_suggestion() {
        for (word, kind) in [
            ("aprove", CommandKind::Approve),
            ("approve2", CommandKind::Approve),
            ("approved", CommandKind::Approve),
            ("appr", CommandKind::Approve),
            ("rejet", CommandKind::Reject),
            ("rejected", CommandKind::Reject),
            ("rety", CommandKind::Retry),
            ("rerunn", CommandKind::Rerun),
            ("reruns", CommandKind::Rerun),
            ("retry-all", CommandKind::Retry),
            ("hlep", CommandKind::Help),
            ("help_me", CommandKind::Help),
        ] {
            assert_eq!(
                parse_commands(&format!("/{word}")),
                vec![Err(CommandError::Unknown {
                    word: word.into(),
                    suggestion: Some(kind)
                })],
                "{word}"
            );
        }
        let shown = parse_commands("/aprove")[0]
            .clone()
            .unwrap_err()
            .to_string();
        assert_eq!(
            shown,
            "unknown command `/aprove` (did you mean `/approve`?)"
        );
    }

    #[test]
    fn help_lists_every_command() {
        let help = help_text();
        for kind in CommandKind::ALL {
            assert!(help.contains(kind.usage()), "{kind}");
            assert!(help.contains(kind.description()), "{kind}");
        }
        assert_eq!(CommandKind::ALL.len(), 5);
        for kind in CommandKind::ALL {
            assert_eq!(CommandKind::from_word(kind.name()), Some(kind));
        }
    }

    #[test]
    fn usage_reply_covers_all_errors_once() {
        let errors: Vec<CommandError> = parse_commands(
            "/aprove\n/approve DDS-1\n/retry now\n/reject `x`\n/reject DDS-`@octocat`",
        )
        .into_iter()
        .filter_map(Result::err)
        .collect();
        assert_eq!(errors.len(), 4, "{errors:?}");
        let reply = usage_reply(&errors);
        assert!(reply.contains("did you mean `/approve`?"));
        assert!(reply.contains("`DDS-1`"));
        assert!(reply.contains("`/retry`"));
        assert_eq!(
            reply.matches("- `/approve [DDS-FIX-YYYYMMDD-NNN]`").count(),
            1
        );
        assert!(!reply.contains("@octocat"), "{reply}");
        assert!(usage_reply(&[]).contains("/help"));
    }

    #[test]
    fn long_values_are_cut_in_errors() {
        let long = "a".repeat(500);
        let got = parse_commands(&format!("/approve DDS-{long}"));
        let Err(CommandError::InvalidId { value, .. }) = &got[0] else {
            panic!("{got:?}")
        };
        assert!(value.chars().count() <= MAX_QUOTED_CHARS + 1);
    }

    mod prop {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn never_panics(body in any::<String>()) {
                let _ = parse_commands(&body);
            }

            #[test]
            fn never_panics_on_markdown_soup(body in "[/a-z`~>\\-\\*#<!\\[\\]() \t\r\n]{0,80}") {
                for result in parse_commands(&body) {
                    if let Err(e) = result {
                        let _ = usage_reply(&[e]);
                    }
                }
            }

            #[test]
            fn commands_inside_fences_are_ignored(body in "[a-z/ \n]{0,60}") {
                let fenced = format!("````\n{body}\n````");
                prop_assert!(parse_commands(&fenced).is_empty());
            }
        }
    }
}
