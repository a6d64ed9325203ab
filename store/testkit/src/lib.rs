//! Test support for the store's tests and the CLI's: the S3-compatible server the tests
//! run against (started by `scripts/s3-test-server start`, which `scripts/test` and CI
//! call), fresh store locations on it, and the configuration that reaches it. A
//! dev-dependency only: nothing here is compiled into a library or the `rnt` binary.

#![warn(missing_docs)]

pub mod s3;
