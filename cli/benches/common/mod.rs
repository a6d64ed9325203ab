//! What the CLI benchmarks share: the seeded generator that draws the reference data (the
//! same draws in the same order give the same data in every bench), `env_or` for the
//! knobs, `median`, and `folder_bytes` (a store's size on disk).
#![allow(dead_code)] // Each bench uses a different part.

pub mod catalogue;
pub mod cost_report;
pub mod reference;
mod rng;

pub use rng::Rng;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The binary under measurement.
pub const RNT: &str = env!("CARGO_BIN_EXE_rnt");

/// Runs `rnt --store STORE args` in `dir`; panics on failure; returns stdout and wall ms.
pub fn rnt(dir: &Path, store: &Path, args: &[&str]) -> (String, f64) {
    let started = Instant::now();
    let output = Command::new(RNT)
        .arg("--store")
        .arg(store)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let ms = started.elapsed().as_secs_f64() * 1e3;
    assert!(
        output.status.success(),
        "rnt {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (String::from_utf8(output.stdout).unwrap(), ms)
}

/// Copies a store folder (without its lock file).
pub fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_folder(&entry.path(), &target);
        } else if entry.file_name() != "lock" {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The middle value (NaN for none).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The bytes of every file under `folder`, recursively: a store's size on disk.
pub fn folder_bytes(folder: &std::path::Path) -> u64 {
    std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                folder_bytes(&entry.path())
            } else {
                meta.len()
            }
        })
        .sum()
}
