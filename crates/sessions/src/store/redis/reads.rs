//! The session check's reads, handed to fred together so that one socket write carries them.
//!
//! fred pipelines automatically: its connection task writes every command it finds queued and
//! flushes the socket once, after the last. But on tokio's multi-thread runtime a task woken by
//! the running task is polled next (the worker's "LIFO slot"), so fred's task runs as soon as
//! the first request that sent a command waits for its answer, finds that one command alone and
//! flushes it: one `writev` and one wake-up of Redis per request, which under load cost more
//! CPU than the rest of the read (DECISIONS 114).
//!
//! Here the requests queue their reads for one gathering task instead. It takes what is queued,
//! yields once so that every request the runtime already has ready can add its read, and then
//! starts all of them in one poll, so that fred finds them queued together and writes them with
//! one flush. Each read keeps its own command, its own timeout and its own answer, so the
//! store's behaviour (fail closed with `Unavailable`) is the same as for a command sent directly.
//!
//! One batch is out at a time: the reads queued while it is out go together in the next, once
//! its answers are back. Under load a round trip then carries every check that arrived during
//! the previous one, so the batch's fixed cost (fred's handling of a command, the socket's
//! write and read, Redis's wake-up) is shared by more requests (DECISIONS 119); an idle
//! service sends a read at once. A batch whose answers took the whole command timeout (Redis
//! hung) fails every read queued behind it at once, rather than sending them batch after batch
//! into the same wait: a check queued behind it fails closed when it does. A batch leaves out
//! the reads whose requests have gone.
//!
//! With the session cache on, a check that found a copy queues a *confirmation* here instead of
//! a read: a batch that holds any sends one `PING` beside its reads, and once the answer is
//! back and the cache has caught up with what Redis sent before it, every confirmation in the
//! batch is answered (see `cache`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use fred::prelude::*;
use futures::future::join_all;
use tokio::sync::{mpsc, oneshot};

use super::cache::AccessCache;
use super::{ACCESS_FIELDS, unavailable};
use crate::store::StoreError;

/// At most this many reads go into one batch (the rest go into the next).
const MAX_BATCH: usize = 256;
/// Reads waiting to be gathered; a request waits for room beyond this.
const QUEUE: usize = 4096;

type Answer = Result<Vec<Value>, Error>;

enum Read {
    /// One `HMGET` of a record's `ACCESS_FIELDS`.
    Fields {
        key: String,
        reply: oneshot::Sender<Answer>,
    },
    /// Answered once a command sent after it was queued has its answer and the cache has
    /// applied what Redis sent before that answer.
    Confirm(oneshot::Sender<Result<(), Error>>),
}

impl Read {
    /// Answers the read with a timeout, unread.
    fn fail(self) {
        let timed_out = || Error::new(ErrorKind::Timeout, "Redis did not answer in time");
        // A request may have gone; nothing waits for its answer then.
        match self {
            Read::Fields { reply, .. } => drop(reply.send(Err(timed_out()))),
            Read::Confirm(reply) => drop(reply.send(Err(timed_out()))),
        }
    }
}

/// The requests' side: queue a read, wait for its answer.
pub(super) struct BatchedReads {
    queue: mpsc::Sender<Read>,
}

impl BatchedReads {
    /// Starts the gathering task on the current runtime; it ends when this is dropped.
    /// `cache`: the session cache that confirmations catch up; `timeout`: the store's command
    /// timeout.
    pub(super) fn start(
        client: Client,
        cache: Option<Arc<AccessCache>>,
        timeout: Duration,
    ) -> Self {
        let (queue, reads) = mpsc::channel(QUEUE);
        tokio::spawn(gather(client, cache, timeout, reads));
        Self { queue }
    }

    /// `HMGET key ACCESS_FIELDS...`: the values in that order, nil where absent.
    pub(super) async fn access_fields(&self, key: String) -> Result<Vec<Value>, StoreError> {
        self.ask(|reply| Read::Fields { key, reply }).await
    }

    /// Returns once every invalidation Redis sent before this was called has been applied to
    /// the cache (see `cache`).
    pub(super) async fn confirm(&self) -> Result<(), StoreError> {
        self.ask(Read::Confirm).await
    }

    /// Queues the read that `read` makes of a reply channel, and waits for its answer.
    async fn ask<T>(
        &self,
        read: impl FnOnce(oneshot::Sender<Result<T, Error>>) -> Read,
    ) -> Result<T, StoreError> {
        let stopped = || StoreError::Unavailable("the read batcher has stopped".into());
        let (reply, answer) = oneshot::channel();
        self.queue.send(read(reply)).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?.map_err(unavailable)
    }
}

async fn gather(
    client: Client,
    cache: Option<Arc<AccessCache>>,
    timeout: Duration,
    mut reads: mpsc::Receiver<Read>,
) {
    let mut batch = Vec::new();
    while reads.recv_many(&mut batch, MAX_BATCH).await > 0 {
        // Let the requests that are ready to run add their reads before the batch is sent.
        tokio::task::yield_now().await;
        while batch.len() < MAX_BATCH {
            match reads.try_recv() {
                Ok(read) => batch.push(read),
                Err(_) => break,
            }
        }
        let sent = Instant::now();
        send(&client, cache.as_deref(), std::mem::take(&mut batch)).await;
        if sent.elapsed() >= timeout {
            // Redis did not answer within the command timeout: what waits behind fails now.
            while let Ok(read) = reads.try_recv() {
                read.fail();
            }
        }
    }
}

/// Starts every read of the batch, and the `PING` if it confirms copies, in one poll
/// (`join_all` polls each once in turn), so that all of them are queued for fred's connection
/// task before it runs.
async fn send(client: &Client, cache: Option<&AccessCache>, batch: Vec<Read>) {
    let mut fields = Vec::with_capacity(batch.len());
    let mut confirms = Vec::new();
    // A request that has gone (timed out, or its client disconnected) needs no answer.
    for read in batch {
        match read {
            Read::Fields { key, reply } if !reply.is_closed() => fields.push((key, reply)),
            Read::Confirm(reply) if !reply.is_closed() => confirms.push(reply),
            _ => {}
        }
    }
    if fields.is_empty() && confirms.is_empty() {
        return;
    }
    let reads = join_all(
        fields
            .iter()
            .map(|(key, _)| client.hmget::<Vec<Value>, _, _>(key.as_str(), &ACCESS_FIELDS)),
    );
    let ping = async {
        if confirms.is_empty() {
            return Ok(());
        }
        if let Some(cache) = cache {
            cache.confirming();
        }
        client.ping::<()>(None).await
    };
    let (answers, pinged): (Vec<Answer>, _) = futures::join!(reads, ping);
    if pinged.is_ok()
        && let Some(cache) = cache
    {
        cache.catch_up();
    }
    // A request may have gone (its client disconnected); nothing waits for its answer.
    for ((_, reply), answer) in fields.into_iter().zip(answers) {
        let _ = reply.send(answer);
    }
    for reply in confirms {
        let _ = reply.send(pinged.clone());
    }
}
