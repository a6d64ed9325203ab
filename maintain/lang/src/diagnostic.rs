//! Program errors with source positions, rendered the way rustc renders them:
//!
//! ```text
//! error: unknown relation `customer`
//!  --> shop.rnt:3:38
//!   |
//! 3 | order_plan(i, p) :- orders(i, c, _), customer(c, p).
//!   |                                      ^^^^^^^^
//!   = help: did you mean `customers`?
//! ```
//!
//! A [`Diagnostic`] holds byte [`Span`]s only; a [`Source`] (file name and text) turns them
//! into lines and columns when rendering. Columns count characters, from 1.

use std::fmt;

use crate::syntax::Span;

/// One error in a program: where, what, and optionally how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The offending text.
    pub span: Span,
    /// What is wrong, one line, no trailing period.
    pub message: String,
    /// What was expected or how to fix it, rendered as `= help: ...`.
    pub help: Option<String>,
    /// Related places (such as an earlier declaration), each rendered as its own snippet.
    pub notes: Vec<Note>,
}

/// A secondary place a [`Diagnostic`] refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The place.
    pub span: Span,
    /// What it is, e.g. "first declared here".
    pub message: String,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span,
            message: message.into(),
            help: None,
            notes: Vec::new(),
        }
    }

    /// Adds the `= help:` line.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Adds a note pointing at another place.
    pub fn with_note(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.notes.push(Note {
            span,
            message: message.into(),
        });
        self
    }

    /// Renders the diagnostic with source snippets; every line ends with `\n`.
    pub fn render(&self, source: &Source) -> String {
        let lines = std::iter::once(self.span).chain(self.notes.iter().map(|n| n.span));
        let width = lines
            .map(|span| source.line_col(span.start).0)
            .max()
            .unwrap_or(1);
        let width = width.to_string().len();
        let mut out = format!("error: {}\n", self.message);
        render_snippet(&mut out, source, self.span, width);
        if let Some(help) = &self.help {
            out.push_str(&format!("{:width$} = help: {help}\n", ""));
        }
        for note in &self.notes {
            out.push_str(&format!("note: {}\n", note.message));
            render_snippet(&mut out, source, note.span, width);
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    /// The message alone, without position (render with a [`Source`] for that).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The most diagnostics one error shows: a program with thousands of faults must not
/// flood the terminal; the first ones are the ones to fix.
pub const DIAGNOSTICS_SHOWN_MAX: usize = 10;

/// Renders the diagnostics (at most [`DIAGNOSTICS_SHOWN_MAX`], then how many more there
/// are), separated by blank lines.
pub fn render_all(diagnostics: &[Diagnostic], source: &Source) -> String {
    let mut rendered: Vec<String> = diagnostics
        .iter()
        .take(DIAGNOSTICS_SHOWN_MAX)
        .map(|d| d.render(source))
        .collect();
    if let Some(more) = diagnostics.len().checked_sub(DIAGNOSTICS_SHOWN_MAX) {
        if more > 0 {
            rendered.push(format!(
                "... and {more} more error{} (fix these first)\n",
                if more == 1 { "" } else { "s" }
            ));
        }
    }
    rendered.join("\n")
}

/// The most characters of input an error quotes: a longer line or field is cut around the
/// fault, with an ellipsis for what was left out (a 100 KB field or a very long program
/// line must not flood the terminal).
pub const QUOTE_CHARS_MAX: usize = 80;

/// `text` when it is at most [`QUOTE_CHARS_MAX`] characters, else its start and its end
/// with `…` between them.
pub fn clip(text: &str) -> std::borrow::Cow<'_, str> {
    let chars = text.chars().count();
    if chars <= QUOTE_CHARS_MAX {
        return std::borrow::Cow::Borrowed(text);
    }
    let keep = (QUOTE_CHARS_MAX - 1) / 2;
    let head: String = text.chars().take(keep).collect();
    let tail: String = text.chars().skip(chars - keep).collect();
    std::borrow::Cow::Owned(format!("{head}…{tail}"))
}

fn render_snippet(out: &mut String, source: &Source, span: Span, width: usize) {
    let (line, column) = source.line_col(span.start);
    let text = source.line(line);
    out.push_str(&format!(
        "{:width$}--> {}:{line}:{column}\n",
        "",
        source.name()
    ));
    out.push_str(&format!("{:width$} |\n", ""));
    let line_start = source.line_start(line);
    let line_end = line_start + text.len();
    let start = source.clamp(span.start);
    let end = source.clamp(span.end.min(line_end).max(start));
    let carets = source.text()[start..end].chars().count().max(1);
    // A long line is quoted around the fault only: at most QUOTE_CHARS_MAX characters.
    let chars: Vec<char> = text.chars().collect();
    let fault = (column - 1).min(chars.len());
    let from = fault
        .saturating_sub(QUOTE_CHARS_MAX / 2)
        .min(chars.len().saturating_sub(QUOTE_CHARS_MAX));
    let to = (from + QUOTE_CHARS_MAX).min(chars.len());
    let (open, close) = (
        if from > 0 { "…" } else { "" },
        if to < chars.len() { "…" } else { "" },
    );
    let shown: String = chars[from..to].iter().collect();
    out.push_str(&format!("{line:>width$} | {open}{shown}{close}\n"));
    // The caret line repeats the line's tabs so the carets line up under any tab width.
    let before: String = open
        .chars()
        .map(|_| ' ')
        .chain(
            chars[from..fault]
                .iter()
                .map(|&c| if c == '\t' { '\t' } else { ' ' }),
        )
        .collect();
    let carets = carets.min(to.saturating_sub(fault)).max(1);
    out.push_str(&format!("{:width$} | {before}{}\n", "", "^".repeat(carets)));
}

/// A program's text and the name to report it under (a file path, or e.g. `<query>`).
#[derive(Clone, Debug)]
pub struct Source {
    name: String,
    text: String,
    /// The byte offset where each line starts; `line_starts[0] == 0`.
    line_starts: Vec<usize>,
}

impl Source {
    /// A source named `name` holding `text`.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Source {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Source {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// The name given to [`Source::new`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The 1-based line and column (in characters) of a byte offset. Offsets past the end
    /// or inside a character are clamped to the nearest character boundary before them.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = self.clamp(offset);
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let start = self.line_starts[line - 1];
        (line, self.text[start..offset].chars().count() + 1)
    }

    /// The text of a 1-based line, without its line break.
    pub fn line(&self, line: usize) -> &str {
        let start = self.line_start(line);
        let end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |&next| next - 1);
        let text = &self.text[start..end.max(start)];
        text.strip_suffix('\r').unwrap_or(text)
    }

    fn line_start(&self, line: usize) -> usize {
        self.line_starts[line.clamp(1, self.line_starts.len()) - 1]
    }

    fn clamp(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }
}

/// The candidate closest to a misspelled `name` by edit distance, when one is within a
/// third of the name's length (at least 1 for names of 3 or more characters). Long names
/// (over 64 characters) get no hint: the distance is quadratic in the name.
pub fn closest_name<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    const NAME_CHARS_MAX: usize = 64;
    let length = name.chars().count();
    if length > NAME_CHARS_MAX {
        return None;
    }
    candidates
        .into_iter()
        .filter(|candidate| candidate.chars().count() <= NAME_CHARS_MAX)
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|&(distance, _)| distance <= length.max(3) / 3)
        .min()
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance in characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}
