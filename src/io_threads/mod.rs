//! The I/O thread pool: `io-threads - 1` worker threads that run jobs handed to them by the
//! main thread and hand the results back.
//!
//! The pool is generic over the job and result types and the work function, so it knows
//! nothing of sockets, RESP or the keyspace: the server decides what a job is (read and
//! parse a connection, write a reply buffer) and gives the connection away by value inside
//! the job; it comes back by value inside the result. No lock is taken on the way: the
//! channels are the only synchronisation, and Rust's ownership guarantees that only one
//! thread touches a connection at a time.
//!
//! The main thread submits a turn's jobs and then collects exactly as many results; the
//! number in flight is therefore bounded by the number of clients (itself bounded by
//! `maxclients`), which bounds both queues. Each worker publishes its memory counter after
//! every job (see `memory`).

use std::thread::JoinHandle;

use crossbeam_channel::{unbounded, Receiver, Sender};

/// A worker's reusable state: its read buffer.
pub struct Worker {
    pub scratch: Vec<u8>,
}

pub struct Pool<J: Send + 'static, D: Send + 'static> {
    senders: Vec<Sender<J>>,
    done: Receiver<D>,
    handles: Vec<JoinHandle<()>>,
    next: usize,
    in_flight: usize,
}

impl<J: Send + 'static, D: Send + 'static> Pool<J, D> {
    /// Start `threads` workers running `work` with a scratch buffer of `scratch_bytes`.
    pub fn new(threads: usize, scratch_bytes: usize, work: fn(&mut Worker, J) -> D) -> Pool<J, D> {
        assert!(threads > 0, "a pool needs at least one thread");
        let (done_tx, done) = unbounded::<D>();
        let mut senders = Vec::with_capacity(threads);
        let mut handles = Vec::with_capacity(threads);
        for i in 0..threads {
            let (tx, rx) = unbounded::<J>();
            let done_tx = done_tx.clone();
            let handle = std::thread::Builder::new()
                .name(format!("io_thd_{}", i + 1))
                .spawn(move || {
                    let mut worker = Worker { scratch: vec![0; scratch_bytes] };
                    for job in rx {
                        let d = work(&mut worker, job);
                        crate::memory::publish();
                        if done_tx.send(d).is_err() {
                            break;
                        }
                    }
                    crate::memory::publish();
                })
                .expect("spawn an I/O thread");
            senders.push(tx);
            handles.push(handle);
        }
        Pool { senders, done, handles, next: 0, in_flight: 0 }
    }

    pub fn threads(&self) -> usize {
        self.senders.len()
    }

    /// Hand a job to the next worker (round robin).
    pub fn submit(&mut self, job: J) {
        let i = self.next % self.senders.len();
        self.next = self.next.wrapping_add(1);
        self.senders[i].send(job).expect("I/O threads outlive the pool");
        self.in_flight += 1;
    }

    /// Wait for the next finished job, if any is in flight.
    pub fn recv(&mut self) -> Option<D> {
        if self.in_flight == 0 {
            return None;
        }
        let d = self.done.recv().expect("I/O threads outlive the pool");
        self.in_flight -= 1;
        Some(d)
    }
}

impl<J: Send + 'static, D: Send + 'static> Drop for Pool<J, D> {
    fn drop(&mut self) {
        // Closing the job channels ends the workers' loops.
        self.senders.clear();
        while self.recv().is_some() {}
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn double(w: &mut Worker, x: u64) -> (u64, usize) {
        (x * 2, w.scratch.len())
    }

    #[test]
    fn jobs_come_back_exactly_once() {
        let mut pool: Pool<u64, (u64, usize)> = Pool::new(3, 16, double);
        for i in 0..1000 {
            pool.submit(i);
        }
        let mut got: Vec<u64> = std::iter::from_fn(|| pool.recv())
            .map(|(x, n)| {
                assert_eq!(n, 16);
                x
            })
            .collect();
        got.sort_unstable();
        assert_eq!(got, (0..1000).map(|i| i * 2).collect::<Vec<_>>());
        assert!(pool.recv().is_none());
    }
}
