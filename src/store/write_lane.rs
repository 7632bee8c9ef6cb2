//! The write lane: a thread of its own for the tasks that hold SQLite's one writer for many statements at a time
//! (the inbox's groups), so that their statements do not wait for a busy runtime between two round trips.
//!
//! Why: a write that holds the writer sends its statements one after another, each a round trip to the writer
//! connection's thread, and the answer wakes the task from outside the runtime. Under replication load both runtime
//! workers are busy checking signatures and proofs for the requests in flight, a woken task waits its turn behind
//! them, and the writer (which every other write waits for) sits idle meanwhile: in a trace of a 5,000-activity
//! delivery, a group of 23 activities held the writer 13.3 ms, of which about 5 ms were gaps between statements.
//! On a thread of its own the task runs as soon as the operating system wakes it, and the same group holds the writer
//! about half as long.
//!
//! The lane is a single-threaded runtime on a named thread, started with the SQLite store and stopped when the store
//! closes (or is dropped). PostgreSQL has no lane: its writes run side by side on their own connections, so a task
//! that waits does not hold every other write up.

use std::future::Future;
use std::sync::Mutex;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::StoreError;

/// The thread and its runtime's handle.
#[derive(Debug)]
pub struct WriteLane {
    handle: tokio::runtime::Handle,
    /// Ends the thread when sent or dropped.
    stop: Mutex<Option<oneshot::Sender<()>>>,
    /// The thread, to wait for its end.
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl WriteLane {
    /// Starts the lane's thread.
    pub fn start() -> Result<WriteLane, StoreError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(StoreError::WriteLane)?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("interai-write-lane".to_owned())
            .spawn(move || {
                // Runs the spawned tasks until the lane is stopped; tasks still pending then are dropped with the
                // runtime (their callers see a cancelled task).
                runtime.block_on(async move {
                    let _ = stopped.await;
                });
            })
            .map_err(StoreError::WriteLane)?;
        Ok(WriteLane {
            handle,
            stop: Mutex::new(Some(stop)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Runs `future` on the lane.
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    /// Ends the lane's thread.
    fn stop(&self) {
        if let Some(stop) = self
            .stop
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        {
            let _ = stop.send(());
        }
    }

    /// Ends the lane's thread and waits until it has ended (a task still pending is dropped: its caller sees it
    /// cancelled). Called when the store closes, after the writer connection has closed.
    pub async fn stop_and_wait(&self) {
        self.stop();
        let thread = self
            .thread
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(thread) = thread {
            // Joining blocks, but only for as long as the lane takes to drop its runtime.
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }
}

impl Drop for WriteLane {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_task_runs_on_the_lanes_own_thread_and_the_lane_ends_when_stopped() {
        let lane = WriteLane::start().expect("starts");
        let caller = std::thread::current().id();
        let (thread, name) = lane
            .spawn(async {
                (
                    std::thread::current().id(),
                    std::thread::current().name().map(str::to_owned),
                )
            })
            .await
            .expect("runs");
        assert_ne!(thread, caller);
        assert_eq!(name.as_deref(), Some("interai-write-lane"));
        lane.stop_and_wait().await;
        // After the stop, a task spawned on the lane never runs: its handle reports it cancelled.
        let late = lane.spawn(async {}).await;
        assert!(late.is_err_and(|error| error.is_cancelled()));
    }
}
