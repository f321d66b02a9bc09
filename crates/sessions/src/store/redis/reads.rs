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
//! one flush. Several batches may be in flight at once; each read keeps its own command, its own
//! timeout and its own answer, so the store's behaviour (fail closed with `Unavailable`) is the
//! same as for a command sent directly.

use fred::prelude::*;
use futures::future::join_all;
use tokio::sync::{mpsc, oneshot};

use super::{ACCESS_FIELDS, unavailable};
use crate::store::StoreError;

/// At most this many reads go into one batch (the rest go into the next).
const MAX_BATCH: usize = 256;
/// Reads waiting to be gathered; a request waits for room beyond this.
const QUEUE: usize = 4096;

type Answer = Result<Vec<Value>, Error>;

/// One `HMGET` of a record's `ACCESS_FIELDS`.
struct Read {
    key: String,
    reply: oneshot::Sender<Answer>,
}

/// The requests' side: queue a read, wait for its answer.
pub(super) struct BatchedReads {
    queue: mpsc::Sender<Read>,
}

impl BatchedReads {
    /// Starts the gathering task on the current runtime; it ends when this is dropped.
    pub(super) fn start(client: Client) -> Self {
        let (queue, reads) = mpsc::channel(QUEUE);
        tokio::spawn(gather(client, reads));
        Self { queue }
    }

    /// `HMGET key ACCESS_FIELDS...`: the values in that order, nil where absent.
    pub(super) async fn access_fields(&self, key: String) -> Result<Vec<Value>, StoreError> {
        let (reply, answer) = oneshot::channel();
        let gone = || StoreError::Unavailable("the read batcher has stopped".into());
        self.queue
            .send(Read { key, reply })
            .await
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?.map_err(unavailable)
    }
}

async fn gather(client: Client, mut reads: mpsc::Receiver<Read>) {
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
        tokio::spawn(send(client.clone(), std::mem::take(&mut batch)));
    }
}

/// Starts every read of the batch in one poll (`join_all` polls each once in turn), so that
/// all of them are queued for fred's connection task before it runs.
async fn send(client: Client, batch: Vec<Read>) {
    let answers: Vec<Answer> = join_all(
        batch
            .iter()
            .map(|read| client.hmget::<Vec<Value>, _, _>(read.key.as_str(), &ACCESS_FIELDS)),
    )
    .await;
    for (read, answer) in batch.into_iter().zip(answers) {
        // The request may have gone (its client disconnected); nothing waits for the answer.
        let _ = read.reply.send(answer);
    }
}
