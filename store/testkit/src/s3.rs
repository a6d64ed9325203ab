//! The S3-compatible test server (SeaweedFS on 127.0.0.1:8333, `scripts/s3-test-server`):
//! fresh store locations on it, and the configuration that reaches it.

use rnt_store::{ObjectOptions, ObjectStoreConfig};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Environment variable that skips the S3 tests (loudly) when set to `1`.
pub const SKIP_ENV: &str = "RNT_SKIP_S3_TESTS";

/// Environment variable naming the bucket the tests use (`scripts/s3-test-server env`
/// sets it; default `rnt-test`).
pub const BUCKET_ENV: &str = "RNT_S3_TEST_BUCKET";

/// What to do when the server is not there.
const HOW_TO_START: &str = "start the test server with `scripts/s3-test-server start` and \
     `eval \"$(scripts/s3-test-server env)\"` (or run every test with `scripts/test`); \
     RNT_SKIP_S3_TESTS=1 skips the S3 tests";

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// A fresh, unused `s3://bucket/prefix` location on the test server, with `name` in the
/// prefix; `None` (after a loud warning on stderr) when [`SKIP_ENV`] is `1`. Open it with
/// [`config`] or [`options`].
///
/// # Panics
///
/// When the server is not configured or does not answer: an S3 test must never pass
/// silently without its server.
pub fn fresh_location(name: &str) -> Option<String> {
    if std::env::var(SKIP_ENV).as_deref() == Ok("1") {
        eprintln!(
            "\n*** {SKIP_ENV}=1: SKIPPING the S3 test `{name}` (nothing was tested against S3) ***\n"
        );
        return None;
    }
    let endpoint = std::env::var("AWS_ENDPOINT_URL").unwrap_or_else(|_| {
        panic!("the S3 tests need AWS_ENDPOINT_URL and credentials: {HOW_TO_START}")
    });
    let host = endpoint
        .trim_start_matches("http://")
        .trim_start_matches("https://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string();
    let reachable = std::net::ToSocketAddrs::to_socket_addrs(&host)
        .ok()
        .and_then(|mut addresses| addresses.next())
        .is_some_and(|address| {
            std::net::TcpStream::connect_timeout(&address, Duration::from_secs(2)).is_ok()
        });
    assert!(
        reachable,
        "the S3 test server at {endpoint} does not answer: {HOW_TO_START}"
    );
    let bucket = std::env::var(BUCKET_ENV).unwrap_or_else(|_| "rnt-test".to_string());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    Some(format!(
        "s3://{bucket}/tests/{name}-{}-{nanos}-{sequence}",
        std::process::id()
    ))
}

/// How to reach the test server: the provider variables of this process's environment
/// (`scripts/s3-test-server env` sets them), as the `rnt` binary passes its own.
pub fn config() -> ObjectStoreConfig {
    ObjectStoreConfig::from_variables(std::env::vars_os())
}

/// [`config`] with default compression: what `rnt` opens a store on the server with.
pub fn options() -> ObjectOptions {
    ObjectOptions::default().with_config(config())
}
