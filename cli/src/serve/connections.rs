//! Every connection the server holds, HTTP and Postgres alike: one cap over all of them,
//! what each is doing, and a sweep that closes those that overstay. A slow or hostile peer
//! holds its own connection, never the server:
//!
//! - **Opening** (an HTTP request's headers not yet whole; a Postgres connection before its
//!   password is taken): closed [`Limits::opening`] after it was accepted, however slowly
//!   it trickles bytes.
//! - **Reading** (a request body or a Postgres message begun and not finished): closed after
//!   [`Limits::stalled`] without a byte.
//! - **Idle** (waiting for the next request or message, or a response the peer does not
//!   read): closed after [`Limits::idle`] without a byte either way.
//! - **Busy** (a command running for it): never closed, never evicted.
//!
//! When the cap is reached, a new connection evicts the one that has waited longest in the
//! least advanced phase (Opening, then Reading, then Idle); when every connection is busy,
//! the new one is refused with a message that says so.
//!
//! *Invariant: at most [`Limits::max`] connections are held; a busy connection is never
//! closed by the registry.*

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The limits of one server.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The most connections held at once.
    pub max: usize,
    /// How long a connection may take to send its first request's headers (Postgres: its
    /// startup packet and password).
    pub opening: Duration,
    /// How long a request body or message may stall without a byte.
    pub stalled: Duration,
    /// How long a connection may do nothing.
    pub idle: Duration,
}

/// What a connection is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Phase {
    /// Before its first request (or, on Postgres, before authentication).
    Opening = 0,
    /// Receiving a request body or a message.
    Reading = 1,
    /// Waiting, or sending a response.
    Idle = 2,
    /// A command runs for it.
    Busy = 3,
}

impl Phase {
    fn from_u8(value: u8) -> Phase {
        match value {
            0 => Phase::Opening,
            1 => Phase::Reading,
            2 => Phase::Idle,
            _ => Phase::Busy,
        }
    }
}

/// A connection's state, shared by its task (which updates it) and the registry.
pub struct Activity {
    /// When it was accepted.
    opened: Instant,
    /// Milliseconds after `opened` of its last byte in or out.
    last_ms: AtomicU64,
    /// Its [`Phase`].
    phase: AtomicU8,
}

impl Activity {
    /// Notes a byte in or out now.
    pub fn touch(&self) {
        let ms = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// Enters `phase` (and counts as activity).
    pub fn enter(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
        self.touch();
    }

    /// The phase it is in.
    pub fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::Relaxed))
    }

    /// When it last sent or received a byte.
    fn last(&self) -> Instant {
        self.opened + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }
}

/// Closes a connection from outside its task (a shutdown of its socket, or a signal its
/// task waits on).
pub type Closer = Box<dyn Fn() + Send + Sync>;

struct Slot {
    activity: Arc<Activity>,
    close: Closer,
}

/// The connections of one server.
pub struct Connections {
    limits: Limits,
    slots: Mutex<BTreeMap<u64, Slot>>,
    next: AtomicU64,
}

/// A connection held in the registry; dropping it frees its place.
pub struct Held {
    registry: Arc<Connections>,
    id: u64,
    /// Its state, for its task to update.
    pub activity: Arc<Activity>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.id);
    }
}

/// Why a connection was not admitted.
#[derive(Debug)]
pub struct Full {
    /// The cap.
    pub max: usize,
}

impl std::fmt::Display for Full {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the server is busy: all {} connections it holds are running commands (--max-connections); try again",
            self.max
        )
    }
}

impl Connections {
    /// An empty registry.
    pub fn new(limits: Limits) -> Arc<Connections> {
        debug_assert!(limits.max > 0);
        Arc::new(Connections {
            limits,
            slots: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(0),
        })
    }

    /// The registry's limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Slot>> {
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many connections are held.
    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.lock().len()
    }

    /// Holds a new connection, `close` closing it from outside; when full, evicts the
    /// connection that waited longest in the least advanced phase, or refuses when every
    /// connection is busy.
    pub fn admit(self: &Arc<Self>, close: Closer) -> Result<Held, Full> {
        let activity = Arc::new(Activity {
            opened: Instant::now(),
            last_ms: AtomicU64::new(0),
            phase: AtomicU8::new(Phase::Opening as u8),
        });
        let evicted = {
            let mut slots = self.lock();
            let evicted = if slots.len() >= self.limits.max {
                let victim = slots
                    .iter()
                    .filter(|(_, slot)| slot.activity.phase() != Phase::Busy)
                    .min_by_key(|(_, slot)| (slot.activity.phase(), slot.activity.last()))
                    .map(|(id, _)| *id)
                    .ok_or(Full {
                        max: self.limits.max,
                    })?;
                slots.remove(&victim)
            } else {
                None
            };
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            slots.insert(
                id,
                Slot {
                    activity: Arc::clone(&activity),
                    close,
                },
            );
            debug_assert!(slots.len() <= self.limits.max);
            (
                evicted,
                Held {
                    registry: Arc::clone(self),
                    id,
                    activity,
                },
            )
        };
        let (evicted, held) = evicted;
        if let Some(slot) = evicted {
            (slot.close)();
        }
        Ok(held)
    }

    /// Closes every connection that has overstayed its phase at `now`; returns how many.
    pub fn sweep(&self, now: Instant) -> usize {
        let overstayed: Vec<Slot> = {
            let mut slots = self.lock();
            let ids: Vec<u64> = slots
                .iter()
                .filter(|(_, slot)| self.overstayed(&slot.activity, now))
                .map(|(id, _)| *id)
                .collect();
            ids.iter().filter_map(|id| slots.remove(id)).collect()
        };
        for slot in &overstayed {
            (slot.close)();
        }
        overstayed.len()
    }

    fn overstayed(&self, activity: &Activity, now: Instant) -> bool {
        let since = |t: Instant| now.saturating_duration_since(t);
        match activity.phase() {
            Phase::Opening => since(activity.opened) > self.limits.opening,
            Phase::Reading => since(activity.last()) > self.limits.stalled,
            Phase::Idle => since(activity.last()) > self.limits.idle,
            Phase::Busy => false,
        }
    }
}

/// The most connections this process can hold besides the store's own files: the soft
/// limit on open files (from `/proc/self/limits`) less `reserve`; `None` where it cannot
/// be read.
pub fn descriptor_room(reserve: usize) -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))?;
    let soft = line.split_whitespace().nth(3)?;
    if soft == "unlimited" {
        return None;
    }
    let soft: usize = soft.parse().ok()?;
    Some(soft.saturating_sub(reserve).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn limits(max: usize) -> Limits {
        Limits {
            max,
            opening: Duration::from_secs(10),
            stalled: Duration::from_secs(30),
            idle: Duration::from_secs(600),
        }
    }

    fn counting(closed: &Arc<AtomicUsize>) -> Closer {
        let closed = Arc::clone(closed);
        Box::new(move || {
            closed.fetch_add(1, Ordering::Relaxed);
        })
    }

    #[test]
    fn a_full_registry_evicts_the_least_advanced_and_never_a_busy_one() {
        let registry = Connections::new(limits(2));
        let closed = Arc::new(AtomicUsize::new(0));
        let busy = registry.admit(counting(&closed)).unwrap();
        busy.activity.enter(Phase::Busy);
        let idle = registry.admit(counting(&closed)).unwrap();
        idle.activity.enter(Phase::Idle);
        // Full: the idle one goes, the busy one stays.
        let opening = registry.admit(counting(&closed)).unwrap();
        assert_eq!(closed.load(Ordering::Relaxed), 1);
        assert_eq!(registry.count(), 2);
        opening.activity.enter(Phase::Busy);
        // Every connection busy: refused, nobody closed.
        let refused = registry.admit(counting(&closed));
        assert!(refused.is_err());
        assert_eq!(closed.load(Ordering::Relaxed), 1);
        drop(busy);
        assert_eq!(registry.count(), 1);
        drop(idle);
        assert_eq!(registry.count(), 1);
    }

    #[test]
    fn the_sweep_closes_what_overstays_its_phase() {
        let registry = Connections::new(limits(8));
        let closed = Arc::new(AtomicUsize::new(0));
        let opening = registry.admit(counting(&closed)).unwrap();
        let reading = registry.admit(counting(&closed)).unwrap();
        reading.activity.enter(Phase::Reading);
        let idle = registry.admit(counting(&closed)).unwrap();
        idle.activity.enter(Phase::Idle);
        let busy = registry.admit(counting(&closed)).unwrap();
        busy.activity.enter(Phase::Busy);
        let now = Instant::now();
        assert_eq!(registry.sweep(now), 0);
        assert_eq!(registry.sweep(now + Duration::from_secs(11)), 1);
        assert_eq!(registry.sweep(now + Duration::from_secs(31)), 1);
        assert_eq!(registry.sweep(now + Duration::from_secs(601)), 1);
        assert_eq!(registry.sweep(now + Duration::from_secs(100_000)), 0);
        assert_eq!(closed.load(Ordering::Relaxed), 3);
        assert_eq!(registry.count(), 1);
        drop((opening, reading, idle, busy));
        assert_eq!(registry.count(), 0);
    }

    #[test]
    fn the_room_for_descriptors_leaves_the_reserve() {
        if let Some(room) = descriptor_room(64) {
            assert!(room >= 1);
        }
    }
}
