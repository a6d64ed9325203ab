//! The frame every page shares: a title, the navigation, and a small stylesheet (no
//! scripts, no external files).

use maud::{html, Markup, DOCTYPE};

/// Digits of a commit id or state hash shown in text (links carry the whole id).
pub const SHORT: usize = 12;

const STYLE: &str = "
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
nav{display:flex;gap:1rem;padding:.6rem 0;border-bottom:1px solid #ccc;margin-bottom:1rem}
a{color:#0645ad}
table{border-collapse:collapse;margin:.5rem 0}
th,td{padding:.15rem .6rem;border-bottom:1px solid #e3e3e3;text-align:left;vertical-align:top}
td.num{text-align:right}
pre,code,.graph,.id{font-family:ui-monospace,monospace}
.graph{white-space:pre;color:#666}
.ins{color:#05631f}.del{color:#a4161a}
.error{color:#a4161a;font-weight:600}
.pager{display:flex;gap:1rem;margin:.5rem 0}
form{margin:.5rem 0}
";

/// A whole page titled `title` around `body`.
pub fn page(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · rnt" }
                style { (maud::PreEscaped(STYLE)) }
            }
            body {
                nav aria-label="main" {
                    a href="/" { "history" }
                    a href="/diff" { "diff" }
                    a href="/verify" { "verify" }
                }
                main { (body) }
            }
        }
    }
}

/// The link to a commit's page, its id cut to [`SHORT`] digits.
pub fn commit_link(hex: &str) -> Markup {
    html! { a.id href={ "/commit/" (hex) } { (short(hex)) } }
}

/// The first [`SHORT`] digits of an id.
pub fn short(hex: &str) -> &str {
    hex.get(..SHORT).unwrap_or(hex)
}

/// A URL query string from pairs (values escaped).
pub fn query(pairs: &[(&str, &str)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(name, value)| format!("{name}={}", escape_component(value)))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

/// `text` percent-encoded for a URL query or path segment.
pub fn escape_component(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
