//! Records encoded beside the writer: a handle compresses new chunks on a thread of its
//! own while its caller goes on (a commit builds its next nodes meanwhile), a batch at a
//! time — one hand-over per `put`, never one per chunk. The records come back in the order
//! the batches went, and are appended to the pending pack in that order, so a pack holds
//! the same bytes as when its writer compressed each batch itself.
//!
//! A chunk handed over is *in flight* until its record is appended: the writer counts it
//! as held (it is not written twice), and a read of it first waits for every batch to
//! come back. Publishing waits for them too, so nothing in flight is ever listed.
//!
//! *Invariant: every chunk handed over is appended exactly once, in hand-over order.*

use super::codec::Compression;
use super::record;
use crate::{Address, AddressMap, Chunk};
use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver, Sender};

/// Bytes in flight beyond which a hand-over waits for the records to come back (a bulk
/// import must not queue its whole input, and what waits counts against the memory
/// budget: 32 MiB put a 600,000-row import over a 128 MiB budget). A commit of the
/// reference tick writes 1–3 MB, well under it.
const IN_FLIGHT_BYTES_MAX: usize = 8 << 20;

/// One batch: its chunks, and the compression to encode them with.
type Job = (Vec<(Address, Chunk)>, Compression);

/// One batch's records, in order.
type Records = Vec<(Address, Vec<u8>)>;

/// The encoding thread of one handle, started on first use.
struct Worker {
    jobs: Sender<Job>,
    done: Receiver<Records>,
}

/// Chunks handed over for encoding and not yet appended.
#[derive(Default)]
pub struct Encoding {
    worker: Option<Worker>,
    /// The chunks in flight, by address.
    in_flight: AddressMap<Chunk>,
    /// Their bytes.
    in_flight_bytes: usize,
    /// Batches handed over whose records have not come back: their addresses, in order,
    /// and their compression.
    batches: VecDeque<(Vec<Address>, Compression)>,
    /// Records that came back, in hand-over order.
    ready: VecDeque<Records>,
}

impl Encoding {
    /// Whether `address` is in flight.
    pub fn holds(&self, address: &Address) -> bool {
        self.in_flight.contains_key(address)
    }

    /// Whether nothing is in flight or waiting to be appended.
    pub fn is_empty(&self) -> bool {
        self.batches.is_empty() && self.ready.is_empty()
    }

    /// Whether a hand-over should wait for the records in flight.
    pub fn is_full(&self) -> bool {
        self.in_flight_bytes > IN_FLIGHT_BYTES_MAX
    }

    /// Hands `chunks` (none in flight or held already) over for encoding with
    /// `compression`. Without a thread (none could be started), encodes them here.
    pub fn submit(&mut self, chunks: Vec<(Address, Chunk)>, compression: Compression) {
        debug_assert!(chunks.iter().all(|(a, _)| !self.holds(a)), "a chunk twice");
        if chunks.is_empty() {
            return;
        }
        if self.worker().is_none() {
            self.ready.push_back(encode(&chunks, compression));
            return;
        }
        let addresses: Vec<Address> = chunks.iter().map(|(address, _)| *address).collect();
        for (address, bytes) in &chunks {
            self.in_flight_bytes += bytes.len();
            self.in_flight.insert(*address, bytes.clone());
        }
        let worker = self.worker.as_ref().expect("started above");
        match worker.jobs.send((chunks, compression)) {
            Ok(()) => self.batches.push_back((addresses, compression)),
            Err(mpsc::SendError((chunks, compression))) => {
                // The thread is gone: encode here, in order after what is in flight.
                self.worker = None;
                self.wait_all();
                self.forget(&addresses);
                self.ready.push_back(encode(&chunks, compression));
            }
        }
    }

    /// The records that came back, oldest batch first; with `wait`, every batch in flight
    /// (the caller appends them, in this order).
    pub fn take(&mut self, wait: bool) -> Vec<Records> {
        if wait {
            self.wait_all();
        } else {
            self.collect(false);
        }
        self.ready.drain(..).collect()
    }

    /// Collects the batches that came back (`block`: waiting for the oldest one).
    fn collect(&mut self, block: bool) {
        while let Some((addresses, _)) = self.batches.front() {
            let Some(worker) = &self.worker else {
                return;
            };
            let records = if block {
                worker.done.recv().ok()
            } else {
                worker.done.try_recv().ok()
            };
            let Some(records) = records else {
                return;
            };
            debug_assert!(records.iter().map(|(a, _)| a).eq(addresses.iter()));
            let (addresses, _) = self.batches.pop_front().expect("a batch was in flight");
            self.forget(&addresses);
            self.ready.push_back(records);
            if block {
                return;
            }
        }
    }

    /// Waits for every batch in flight.
    fn wait_all(&mut self) {
        while !self.batches.is_empty() {
            let before = self.batches.len();
            self.collect(true);
            if self.batches.len() == before {
                // The thread died with batches in it (a panic while compressing): encode
                // them here, in order.
                self.worker = None;
                for (addresses, compression) in std::mem::take(&mut self.batches) {
                    let chunks: Vec<(Address, Chunk)> = addresses
                        .iter()
                        .map(|address| (*address, self.in_flight[address].clone()))
                        .collect();
                    self.forget(&addresses);
                    self.ready.push_back(encode(&chunks, compression));
                }
            }
        }
    }

    fn forget(&mut self, addresses: &[Address]) {
        for address in addresses {
            if let Some(bytes) = self.in_flight.remove(address) {
                self.in_flight_bytes -= bytes.len();
            }
        }
    }

    /// The thread, started on first use; `None` when it cannot be started.
    fn worker(&mut self) -> Option<&Worker> {
        if self.worker.is_none() {
            let (jobs, inbox) = mpsc::channel::<Job>();
            let (outbox, done) = mpsc::channel::<Records>();
            let started = std::thread::Builder::new()
                .name("rnt-pack-encode".into())
                .spawn(move || {
                    for (chunks, compression) in inbox {
                        if outbox.send(encode(&chunks, compression)).is_err() {
                            return;
                        }
                    }
                });
            if started.is_ok() {
                self.worker = Some(Worker { jobs, done });
            }
        }
        self.worker.as_ref()
    }
}

/// The records of `chunks`, in order.
fn encode(chunks: &[(Address, Chunk)], compression: Compression) -> Records {
    chunks
        .iter()
        .map(|(address, bytes)| {
            let mut out = Vec::with_capacity(bytes.len() + record::RECORD_HEADER_BYTES);
            record::encode_record(&mut out, address, bytes, compression);
            (*address, out)
        })
        .collect()
}
