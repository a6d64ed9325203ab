//! Byte ranges in a program's text.

/// A byte range `start..end` in a program's text. Offsets always fall on UTF-8 character
/// boundaries; `crate::diagnostic::Source` turns them into lines and columns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// The offset of the first byte.
    pub start: usize,
    /// The offset just past the last byte.
    pub end: usize,
}

impl Span {
    /// The range `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        debug_assert!(start <= end, "span {start}..{end} runs backwards");
        Span { start, end }
    }

    /// The smallest span covering `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The length in bytes.
    pub fn len(self) -> usize {
        self.end - self.start
    }

    /// Whether the span covers no byte (a position, such as the end of the input).
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}
