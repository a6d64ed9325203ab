//! Work beside the caller, on the second core when it is free: [`offer`] hands a job to
//! the process's helper thread and returns at once; the caller goes on with its own work
//! and then [`Offer::take`]s the result — waiting only when the helper has started the job,
//! and doing the work itself (the offer returns `None`) when the helper had not got to it.
//! So a busy machine, whose scheduler lets the helper run late, costs a commit nothing but
//! the hand-over: the caller never waits for a thread to be scheduled.
//!
//! *Invariant: a job runs at most once, and its result is used only when it ran; the
//! caller's fallback computes the same thing, so results never depend on timing.*

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

/// A job offered to the helper thread.
pub struct Offer<T> {
    claimed: Arc<AtomicBool>,
    result: Receiver<T>,
}

impl<T> Offer<T> {
    /// The job's result when the helper started it (waiting for it to finish); `None` when
    /// it had not: the job is withdrawn and the caller does the work itself.
    pub fn take(self) -> Option<T> {
        if self.claimed.swap(true, Ordering::AcqRel) {
            // The helper claimed it first: it runs to the end and sends its result (a panic
            // drops the sender: the caller then does the work).
            self.result.recv().ok()
        } else {
            None
        }
    }
}

/// Offers `job` to the helper thread (started on first use; without one, the offer is
/// never taken and the caller does the work).
pub fn offer<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> Offer<T> {
    let claimed = Arc::new(AtomicBool::new(false));
    let (sender, result) = mpsc::channel();
    let mine = Arc::clone(&claimed);
    helper().push(Box::new(move || {
        if !mine.swap(true, Ordering::AcqRel) {
            let _ = sender.send(job());
        }
    }));
    Offer { claimed, result }
}

/// The helper thread's queue.
struct Helper {
    jobs: Mutex<VecDeque<Job>>,
    wake: Condvar,
}

impl Helper {
    fn push(&self, job: Job) {
        self.jobs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push_back(job);
        self.wake.notify_one();
    }

    fn run(&self) {
        loop {
            let job = {
                let mut jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if let Some(job) = jobs.pop_front() {
                        break job;
                    }
                    jobs = self.wake.wait(jobs).unwrap_or_else(|p| p.into_inner());
                }
            };
            // A job that panics withdraws its result; the thread goes on.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        }
    }
}

fn helper() -> &'static Helper {
    static HELPER: OnceLock<&'static Helper> = OnceLock::new();
    HELPER.get_or_init(|| {
        let helper: &'static Helper = Box::leak(Box::new(Helper {
            jobs: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
        }));
        // A thread that cannot start leaves the queue unserved: every offer is then done
        // by its caller.
        let _ = std::thread::Builder::new()
            .name("rnt-beside".into())
            .spawn(move || helper.run());
        helper
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offer_is_done_once_by_the_helper_or_by_the_caller() {
        let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut by_helper = 0;
        for i in 0..200u64 {
            let counted = Arc::clone(&runs);
            let offer = offer(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                i * 2
            });
            if i % 2 == 0 {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            match offer.take() {
                Some(doubled) => {
                    assert_eq!(doubled, i * 2);
                    by_helper += 1;
                }
                None => {
                    runs.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
        // Given time, the helper takes an offer.
        let slow = offer(|| 7);
        std::thread::sleep(std::time::Duration::from_secs(2));
        if slow.take() == Some(7) {
            by_helper += 1;
        }
        assert!(by_helper > 0, "the helper took some");
        // Jobs withdrawn may still sit in the queue: give the helper time to skip them.
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(
            runs.load(Ordering::SeqCst),
            200,
            "each job done exactly once"
        );
    }
}
