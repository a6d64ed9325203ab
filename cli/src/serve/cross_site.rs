//! Requests a browser sends for another site are refused, so a web page the user visits
//! can neither change the store nor, by DNS rebinding, read it:
//!
//! - Every request's `Host` must name the address the server listens on (`localhost` for a
//!   loopback address; any IP address of the machine's for one bound to all addresses) or
//!   a name given with `--allow-host`. A page on `evil.example` whose name an attacker
//!   points at 127.0.0.1 sends `Host: evil.example`, and is refused.
//! - A request that may change something (any method but GET, HEAD and OPTIONS) is refused
//!   when its `Origin` names another origin (`null` included) or its `Sec-Fetch-Site` is
//!   `cross-site` or `same-site`: browsers send these on every cross-origin POST, the
//!   "simple" ones that need no preflight included.
//!
//! Requests without those headers — curl, scripts, drivers, the `rnt` CLI — are not
//! browsers, and are served as before. The web view's own pages are same-origin.

use axum::http::{header, HeaderMap, Method};
use std::net::{IpAddr, SocketAddr};

/// The names a server answers to.
#[derive(Clone, Debug)]
pub struct Hosts {
    /// The address it listens on.
    bound: SocketAddr,
    /// Names given with `--allow-host` (lower case; `NAME` or `NAME:PORT`).
    allowed: Vec<String>,
}

impl Hosts {
    /// The names a server listening on `bound` answers to, besides `allowed`.
    pub fn new(bound: SocketAddr, allowed: &[String]) -> Hosts {
        Hosts {
            bound,
            allowed: allowed
                .iter()
                .map(|name| name.to_ascii_lowercase())
                .collect(),
        }
    }

    /// Whether a request whose `Host` header is `host` is for this server (`None`: no
    /// header, which no browser sends).
    pub fn accepts(&self, host: Option<&str>) -> bool {
        let Some(host) = host else {
            return true;
        };
        let Some((name, port)) = split_host(host) else {
            return false;
        };
        let with_port = format!("{name}:{port}");
        if self
            .allowed
            .iter()
            .any(|allowed| *allowed == name || *allowed == with_port)
        {
            return true;
        }
        if port != self.bound.port() {
            return false;
        }
        let bound = self.bound.ip();
        match name.parse::<IpAddr>() {
            // An address cannot be rebound to another machine.
            Ok(ip) => ip == bound || bound.is_unspecified(),
            Err(_) => name == "localhost" && (bound.is_loopback() || bound.is_unspecified()),
        }
    }
}

/// `host` (a `Host` header) as a lower-case name without brackets and a port (80 when
/// none is written); `None` when it is not one.
fn split_host(host: &str) -> Option<(String, u16)> {
    let host = host.trim().to_ascii_lowercase();
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        match after {
            "" => (name.to_string(), None),
            _ => (name.to_string(), Some(after.strip_prefix(':')?)),
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if !name.contains(':') => (name.to_string(), Some(port)),
            Some(_) => return None,
            None => (host.clone(), None),
        }
    };
    if name.is_empty() {
        return None;
    }
    let port = match port {
        Some(port) => port.parse().ok()?,
        None => 80,
    };
    Some((name, port))
}

/// Why a request of `method` with `headers`, sent to `host`, comes from another site;
/// `None` when it does not (or cannot change anything).
pub fn refusal(method: &Method, headers: &HeaderMap, host: Option<&str>) -> Option<String> {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return None;
    }
    let text = |name| {
        headers
            .get(name)
            .map(|v| v.to_str().unwrap_or("(not text)"))
    };
    if let Some(site) = text("sec-fetch-site") {
        if site.eq_ignore_ascii_case("cross-site") || site.eq_ignore_ascii_case("same-site") {
            return Some(format!(
                "a browser sent this request from another site (Sec-Fetch-Site: {site}); the server takes changes only from its own pages and from programs"
            ));
        }
    }
    let origin = text(header::ORIGIN.as_str())?;
    let own = host.map(|host| format!("http://{}", host.trim()));
    if own.is_some_and(|own| own.eq_ignore_ascii_case(origin)) {
        return None;
    }
    Some(format!(
        "a browser sent this request from another origin ({}); the server takes changes only from its own pages and from programs",
        rnt_db::diagnostic::clip(origin)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn only_the_listening_address_and_allowed_names_are_hosts() {
        let hosts = Hosts::new("127.0.0.1:7878".parse().unwrap(), &["Box.lan".into()]);
        for good in [
            "127.0.0.1:7878",
            "localhost:7878",
            "LOCALHOST:7878",
            "box.lan",
            "box.lan:9",
        ] {
            assert!(hosts.accepts(Some(good)), "{good}");
        }
        for bad in [
            "evil.example:7878",
            "127.0.0.1:7879",
            "127.0.0.2:7878",
            "localhost",
            "127.0.0.1:x",
            "",
            "[::1]:7878",
        ] {
            assert!(!hosts.accepts(Some(bad)), "{bad}");
        }
        assert!(hosts.accepts(None));
        let v6 = Hosts::new("[::1]:80".parse().unwrap(), &[]);
        assert!(v6.accepts(Some("[::1]")));
        assert!(v6.accepts(Some("[::1]:80")));
        assert!(v6.accepts(Some("localhost")));
        assert!(!v6.accepts(Some("[::1]:81")));
        let all = Hosts::new("0.0.0.0:7878".parse().unwrap(), &[]);
        assert!(all.accepts(Some("10.1.2.3:7878")));
        assert!(!all.accepts(Some("box.lan:7878")));
    }

    #[test]
    fn a_change_from_another_origin_or_site_is_refused() {
        let with = |pairs: &[(&'static str, &'static str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(*name, HeaderValue::from_static(value));
            }
            headers
        };
        let host = Some("127.0.0.1:7878");
        let foreign = with(&[("origin", "http://evil.example")]);
        assert!(refusal(&Method::POST, &foreign, host).is_some());
        assert!(refusal(&Method::GET, &foreign, host).is_none());
        assert!(refusal(&Method::POST, &with(&[("origin", "null")]), host).is_some());
        assert!(refusal(
            &Method::POST,
            &with(&[("origin", "http://127.0.0.1:7878")]),
            host
        )
        .is_none());
        assert!(refusal(
            &Method::POST,
            &with(&[("origin", "https://127.0.0.1:7878")]),
            host
        )
        .is_some());
        assert!(refusal(
            &Method::DELETE,
            &with(&[("sec-fetch-site", "same-site")]),
            host
        )
        .is_some());
        assert!(refusal(
            &Method::POST,
            &with(&[("sec-fetch-site", "cross-site")]),
            host
        )
        .is_some());
        assert!(refusal(
            &Method::POST,
            &with(&[("sec-fetch-site", "same-origin")]),
            host
        )
        .is_none());
        assert!(refusal(&Method::POST, &with(&[("sec-fetch-site", "none")]), host).is_none());
        assert!(refusal(&Method::POST, &HeaderMap::new(), host).is_none());
        assert!(refusal(
            &Method::POST,
            &with(&[("origin", "http://127.0.0.1:7878")]),
            None
        )
        .is_some());
    }
}
