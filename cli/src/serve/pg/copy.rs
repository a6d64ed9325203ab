//! The copy sub-protocol of `COPY … TO STDOUT` and `COPY … FROM STDIN` (psql's `\copy`):
//! CopyOutResponse, a CopyData per row, CopyDone; or CopyInResponse, then the client's
//! CopyData until CopyDone (or CopyFail). The data is PostgreSQL's text format or CSV
//! (`rnt_sql_run::copy` reads the statement and makes the INSERT).

use super::values;
use super::wire::{self, Message};
use rnt_db::Value;
use rnt_sql_run::copy::{CopyFormat, CopyPlan};

/// The most bytes a COPY FROM may send: its rows become one INSERT, one commit, held in
/// memory until then.
pub const COPY_IN_BYTES_MAX: usize = 256 << 20;

/// The response that opens a copy: `G` (in) or `H` (out), text format, `columns` wide.
pub fn response(kind: u8, columns: usize) -> Message {
    let columns = i16::try_from(columns).unwrap_or(i16::MAX);
    let mut message = Message::new(kind).byte(0).i16(columns);
    for _ in 0..columns {
        message = message.i16(0);
    }
    message
}

/// The CopyData lines of `rows` (and of `names`, for CSV's HEADER).
pub fn lines(plan: &CopyPlan, names: &[String], rows: &[Vec<Value>]) -> Vec<Message> {
    let mut out = Vec::with_capacity(rows.len() + 1);
    if plan.header && plan.format == CopyFormat::Csv {
        let header: Vec<Option<String>> = names.iter().cloned().map(Some).collect();
        out.push(Message::new(b'd').bytes(line(plan, &header).as_bytes()));
    }
    for row in rows {
        let fields: Vec<Option<String>> = row.iter().map(values::text).collect();
        out.push(Message::new(b'd').bytes(line(plan, &fields).as_bytes()));
    }
    out
}

/// One row's line, `\n` ended.
fn line(plan: &CopyPlan, fields: &[Option<String>]) -> String {
    let delimiter = plan.delimiter.to_string();
    let written: Vec<String> = fields
        .iter()
        .map(|field| match (field, plan.format) {
            (None, _) => plan.null.clone(),
            (Some(text), CopyFormat::Text) => escaped(text, plan.delimiter),
            (Some(text), CopyFormat::Csv) => quoted(text, plan),
        })
        .collect();
    format!("{}\n", written.join(&delimiter))
}

/// A field in the text format: backslash, newline, carriage return, tab and the delimiter
/// escaped.
fn escaped(text: &str, delimiter: char) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == delimiter => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A CSV field, quoted when it holds the delimiter, a quote, a line break, is empty (an
/// unquoted empty field is null) or equals the null string.
fn quoted(text: &str, plan: &CopyPlan) -> String {
    let needs = text.is_empty()
        || *text == plan.null
        || text.contains([plan.delimiter, plan.quote, '\n', '\r']);
    match needs {
        true => {
            let q = plan.quote.to_string();
            format!("{q}{}{q}", text.replace(&q, &format!("{q}{q}")))
        }
        false => text.to_string(),
    }
}

/// Reads CopyData until CopyDone: the bytes sent, or the client's CopyFail message.
pub fn receive(input: &mut impl std::io::Read) -> std::io::Result<Result<Vec<u8>, String>> {
    let mut data = Vec::new();
    loop {
        let (kind, body) = wire::read_message(input, wire::MESSAGE_BYTES_MAX, || {})?;
        match kind {
            b'd' if data.len() + body.len() > COPY_IN_BYTES_MAX => {
                // Read on to CopyDone, then refuse: the conversation stays in step.
                data.clear();
                return skip_rest(input).map(|()| {
                    Err(format!(
                        "COPY FROM sends at most {} MiB (COPY_IN_BYTES_MAX)",
                        COPY_IN_BYTES_MAX >> 20
                    ))
                });
            }
            b'd' => data.extend_from_slice(&body),
            b'c' => return Ok(Ok(data)),
            b'f' => {
                let why = String::from_utf8_lossy(body.strip_suffix(&[0]).unwrap_or(&body));
                return Ok(Err(format!("COPY from stdin failed: {why}")));
            }
            // Flush and Sync may come inside a copy; they mean nothing there.
            b'H' | b'S' => {}
            other => {
                return Ok(Err(format!(
                    "unexpected message type `{}` inside COPY FROM STDIN",
                    char::from(other)
                )))
            }
        }
    }
}

fn skip_rest(input: &mut impl std::io::Read) -> std::io::Result<()> {
    loop {
        let (kind, _) = wire::read_message(input, wire::MESSAGE_BYTES_MAX, || {})?;
        if matches!(kind, b'c' | b'f') {
            return Ok(());
        }
    }
}

/// The rows of COPY FROM's data: each field's text, `None` for null.
pub fn rows(plan: &CopyPlan, data: &[u8]) -> Result<Vec<Vec<Option<String>>>, String> {
    let text = std::str::from_utf8(data).map_err(|_| "COPY data that is not UTF-8".to_string())?;
    let mut rows = match plan.format {
        CopyFormat::Text => text_rows(plan, text),
        CopyFormat::Csv => csv_rows(plan, text)?,
    };
    if plan.header && !rows.is_empty() {
        rows.remove(0);
    }
    Ok(rows)
}

/// The text format: a line per row (`\.` ends the data), fields split at the delimiter,
/// `\N` (the null string) for null, backslash escapes.
fn text_rows(plan: &CopyPlan, text: &str) -> Vec<Vec<Option<String>>> {
    let mut rows = Vec::new();
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line == "\\." {
            break;
        }
        if line.is_empty() {
            continue;
        }
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut raw = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    let next = chars.next().unwrap_or('\\');
                    raw.push('\\');
                    raw.push(next);
                    field.push(match next {
                        'n' => '\n',
                        'r' => '\r',
                        't' => '\t',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        'v' => '\u{b}',
                        other => other,
                    });
                }
                c if c == plan.delimiter => {
                    fields.push(text_field(&raw, &field, plan));
                    field.clear();
                    raw.clear();
                }
                c => {
                    field.push(c);
                    raw.push(c);
                }
            }
        }
        fields.push(text_field(&raw, &field, plan));
        rows.push(fields);
    }
    rows
}

fn text_field(raw: &str, field: &str, plan: &CopyPlan) -> Option<String> {
    (raw != plan.null).then(|| field.to_string())
}

/// CSV: fields split at the delimiter outside quotes, a doubled quote a quote, line breaks
/// inside quotes kept; an unquoted field equal to the null string is null.
fn csv_rows(plan: &CopyPlan, text: &str) -> Result<Vec<Vec<Option<String>>>, String> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let (mut quoting, mut was_quoted) = (false, false);
    let mut chars = text.chars().peekable();
    let finish = |field: &mut String, was_quoted: &mut bool| {
        let value = match !*was_quoted && *field == plan.null {
            true => None,
            false => Some(std::mem::take(field)),
        };
        field.clear();
        *was_quoted = false;
        value
    };
    while let Some(c) = chars.next() {
        match (quoting, c) {
            (true, c) if c == plan.quote && chars.peek() == Some(&plan.quote) => {
                chars.next();
                field.push(c);
            }
            (true, c) if c == plan.quote => quoting = false,
            (true, c) => field.push(c),
            (false, c) if c == plan.quote => {
                quoting = true;
                was_quoted = true;
            }
            (false, c) if c == plan.delimiter => row.push(finish(&mut field, &mut was_quoted)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(finish(&mut field, &mut was_quoted));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    if quoting {
        return Err("COPY: CSV data ends inside a quoted field".into());
    }
    if !field.is_empty() || was_quoted || !row.is_empty() {
        row.push(finish(&mut field, &mut was_quoted));
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(sql: &str) -> CopyPlan {
        rnt_sql_run::copy::plan(sql).unwrap().unwrap()
    }

    #[test]
    fn text_and_csv_read_back_what_they_write() {
        for sql in [
            "COPY t FROM STDIN",
            "COPY t FROM STDIN WITH (FORMAT csv)",
            "COPY t FROM STDIN CSV HEADER",
        ] {
            let plan = plan(sql);
            let fields = vec![
                Some("a\tb,\"c\"\nd\\e".to_string()),
                None,
                Some(String::new()),
                Some("\\N".to_string()),
            ];
            let mut data = String::new();
            if plan.header {
                data.push_str("h1,h2,h3,h4\n");
            }
            data.push_str(&line(&plan, &fields));
            data.push_str(&line(&plan, &fields));
            let read = rows(&plan, data.as_bytes()).unwrap();
            assert_eq!(
                read,
                vec![fields.clone(), fields.clone()],
                "{sql}: {data:?}"
            );
        }
        assert!(rows(&plan("COPY t FROM STDIN CSV"), b"\"open").is_err());
        assert_eq!(
            rows(&plan("COPY t FROM STDIN"), b"1\t\\N\n\\.\nignored\n").unwrap(),
            vec![vec![Some("1".to_string()), None]]
        );
    }
}
