//! A progress line for long work (import): one stderr line rewritten in place, shown only
//! when stderr is a terminal, so scripts and logs never see it.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The shortest time between two redraws: fast enough to look alive, slow enough to cost
/// nothing.
const REDRAW_INTERVAL: Duration = Duration::from_millis(100);

/// A progress line on stderr.
pub struct Progress {
    enabled: bool,
    label: String,
    total_bytes: Option<u64>,
    last_drawn: Option<Instant>,
}

impl Progress {
    /// A progress line for `label`; `total_bytes` is the input's size, when known.
    pub fn new(label: impl Into<String>, total_bytes: Option<u64>) -> Progress {
        Progress {
            enabled: std::io::stderr().is_terminal(),
            label: label.into(),
            total_bytes: total_bytes.filter(|&t| t > 0),
            last_drawn: None,
        }
    }

    /// Reports `rows` read and `bytes` consumed so far.
    pub fn update(&mut self, rows: u64, bytes: u64) {
        if !self.enabled
            || self
                .last_drawn
                .is_some_and(|t| t.elapsed() < REDRAW_INTERVAL)
        {
            return;
        }
        self.last_drawn = Some(Instant::now());
        let amount = match self.total_bytes {
            Some(total) => format!(
                "{} of {} ({}%)",
                human_bytes(bytes),
                human_bytes(total),
                bytes.min(total) * 100 / total
            ),
            None => human_bytes(bytes),
        };
        let mut err = std::io::stderr().lock();
        // `\r` returns to the line's start, `ESC[K` clears what a longer line left behind.
        let _ = write!(err, "\r{}: {rows} rows, {amount}\x1b[K", self.label);
        let _ = err.flush();
    }

    /// Shows `message` in place, at most every redraw interval (for frequent updates, such
    /// as a transfer's running totals).
    pub fn status(&mut self, message: &str) {
        if self
            .last_drawn
            .is_some_and(|t| t.elapsed() < REDRAW_INTERVAL)
        {
            return;
        }
        self.message(message);
    }

    /// Shows a free-form status `message` (e.g. which view a backfill is computing).
    pub fn message(&mut self, message: &str) {
        if !self.enabled {
            return;
        }
        self.last_drawn = Some(Instant::now());
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{}: {message}\x1b[K", self.label);
        let _ = err.flush();
    }

    /// Clears the line, if one was drawn.
    pub fn finish(&mut self) {
        if self.enabled && self.last_drawn.is_some() {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
            self.last_drawn = None;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `bytes` in B, KiB, MiB or GiB with one decimal.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut unit = 0;
    let mut scaled = bytes as f64;
    while scaled >= 1024.0 && unit + 1 < UNITS.len() {
        scaled /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{scaled:.1} {}", UNITS[unit])
    }
}

/// A progress line for a transfer (`label`: e.g. `pushing to origin`), and the callback
/// that feeds it: `label: 1204 chunks, 3.1 MiB`. Call `finish` on the line before printing
/// the result.
pub fn transfer(label: &str) -> (Arc<Mutex<Progress>>, rnt_db::TransferProgress) {
    let line = Arc::new(Mutex::new(Progress::new(label, None)));
    let fed = line.clone();
    let callback: rnt_db::TransferProgress = Arc::new(move |report| {
        if let Ok(mut line) = fed.lock() {
            line.status(&format!(
                "{} chunks, {}",
                report.chunks,
                human_bytes(report.bytes)
            ));
        }
    });
    (line, callback)
}

/// Clears a transfer's progress line (before the result is printed).
pub fn finish(line: &Mutex<Progress>) {
    if let Ok(mut line) = line.lock() {
        line.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn sizes() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(48 * 1024 * 1024), "48.0 MiB");
    }
}
