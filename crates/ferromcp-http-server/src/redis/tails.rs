//! [`Tails`]: every live tail of one node (resumptions, forwarded requests' streams, GET
//! streams of sessions owned elsewhere) reads Redis through one shared blocking connection:
//! one `XREAD BLOCK` over every tailed stream at once, its entries fanned out in this
//! process. A node thus holds one reader connection however many streams it serves from
//! Redis (before, each tail opened its own).
//!
//! A new subscription wakes the reader out of its `XREAD BLOCK` with `CLIENT UNBLOCK` (sent
//! on the node's shared command connection), so its stream joins the next read at once. A
//! subscriber whose queue is full is left out of reads until it catches up (its position is
//! kept, nothing is lost). The reader closes its connection after [`IDLE`] without
//! subscriptions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use redis::aio::{ConnectionManager, MultiplexedConnection};
use tokio::sync::{Notify, mpsc};

use super::events::{Entry, ReadReply};

/// How long the reader keeps its connection without any subscription.
const IDLE: Duration = Duration::from_secs(30);
/// Entries queued per subscription before it is left out of reads.
const QUEUE: usize = 8;
/// Entries read per stream per `XREAD`.
const COUNT: usize = 256;

/// A batch of entries of one stream, oldest first.
pub(crate) type Batch = Vec<Entry>;

/// The shared reader of one node.
pub(crate) struct Tails {
    inner: Arc<Inner>,
}

struct Inner {
    client: redis::Client,
    commands: ConnectionManager,
    state: Mutex<State>,
    wake: Notify,
    /// The longest `XREAD BLOCK`, in milliseconds.
    block_ms: u64,
}

#[derive(Default)]
struct State {
    subs: HashMap<u64, Sub>,
    next: u64,
    /// Bumped by every new subscription.
    generation: u64,
    /// The generation the reader's current (or last) read covers.
    reading: u64,
    /// Whether the reader task runs.
    running: bool,
    /// Whether the reader is in (or about to send) an `XREAD BLOCK`.
    blocked: bool,
    /// `CLIENT ID` of the reader's connection.
    reader_id: Option<i64>,
}

struct Sub {
    key: String,
    /// The last entry id delivered.
    after: (u64, u64),
    tx: mpsc::Sender<Batch>,
}

/// One stream's subscription; ends when dropped.
pub(crate) struct Subscription {
    id: u64,
    inner: Arc<Inner>,
    pub(crate) rx: mpsc::Receiver<Batch>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        lock(&self.inner.state).subs.remove(&self.id);
    }
}

fn lock(m: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A Redis stream entry id (`ms-seq`, or `ms`) as numbers.
pub(crate) fn parse_id(id: &str) -> Option<(u64, u64)> {
    let (ms, seq) = id.split_once('-').unwrap_or((id, "0"));
    Some((ms.parse().ok()?, seq.parse().ok()?))
}

impl Tails {
    pub(crate) fn new(client: redis::Client, commands: ConnectionManager, block_ms: u64) -> Self {
        Self {
            inner: Arc::new(Inner {
                client,
                commands,
                state: Mutex::new(State::default()),
                wake: Notify::new(),
                block_ms,
            }),
        }
    }

    /// Follows the Redis stream `key` from after entry `after`; `None` when `after` is not an
    /// entry id.
    pub(crate) async fn subscribe(&self, key: String, after: &str) -> Option<Subscription> {
        let after = parse_id(after)?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let (id, generation, spawn) = {
            let mut s = lock(&self.inner.state);
            let id = s.next;
            s.next += 1;
            s.generation += 1;
            s.subs.insert(id, Sub { key, after, tx });
            let spawn = !s.running;
            s.running = true;
            (id, s.generation, spawn)
        };
        if spawn {
            tokio::spawn(read(self.inner.clone()));
        }
        self.inner.wake.notify_one();
        self.inner.unblock(generation).await;
        Some(Subscription {
            id,
            inner: self.inner.clone(),
            rx,
        })
    }
}

impl Inner {
    /// Makes sure a read covering `generation` comes soon: wakes the reader out of a block
    /// that started before it.
    async fn unblock(&self, generation: u64) {
        for _ in 0..50 {
            let target = {
                let s = lock(&self.state);
                if !s.running || !s.blocked || s.reading >= generation {
                    return;
                }
                s.reader_id
            };
            if let Some(client) = target {
                let mut c = self.commands.clone();
                let done: redis::RedisResult<i64> = redis::cmd("CLIENT")
                    .arg("UNBLOCK")
                    .arg(client)
                    .query_async(&mut c)
                    .await;
                if matches!(done, Ok(1)) {
                    return;
                }
            }
            // The reader is between its snapshot and its XREAD: try again shortly.
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// The streams to read next and from where (each stream from its least advanced
    /// subscriber with room), or `None` when nobody is subscribed. Marks the reader blocked.
    fn plan(&self) -> Option<Vec<(String, (u64, u64))>> {
        let mut s = lock(&self.state);
        s.subs.retain(|_, sub| !sub.tx.is_closed());
        if s.subs.is_empty() {
            return None;
        }
        let mut from: HashMap<&str, (u64, u64)> = HashMap::new();
        for sub in s.subs.values() {
            if sub.tx.capacity() == 0 {
                continue;
            }
            let e = from.entry(sub.key.as_str()).or_insert(sub.after);
            *e = (*e).min(sub.after);
        }
        let plan: Vec<(String, (u64, u64))> =
            from.into_iter().map(|(k, a)| (k.to_owned(), a)).collect();
        s.reading = s.generation;
        s.blocked = !plan.is_empty();
        Some(plan)
    }

    /// Hands each subscriber the entries of its stream after its position.
    fn deliver(&self, reply: Vec<(String, Vec<Entry>)>) {
        let mut s = lock(&self.state);
        s.blocked = false;
        for (key, entries) in reply {
            let ids: Vec<Option<(u64, u64)>> = entries.iter().map(|(id, _)| parse_id(id)).collect();
            for sub in s.subs.values_mut().filter(|sub| sub.key == key) {
                let batch: Batch = entries
                    .iter()
                    .zip(&ids)
                    .filter(|(_, id)| id.is_some_and(|id| id > sub.after))
                    .map(|(e, _)| e.clone())
                    .collect();
                let Some(last) = batch.last().and_then(|(id, _)| parse_id(id)) else {
                    continue;
                };
                if sub.tx.try_send(batch).is_ok() {
                    sub.after = last;
                }
            }
        }
    }

    fn stop_if_idle(&self) -> bool {
        let mut s = lock(&self.state);
        if s.subs.is_empty() {
            s.running = false;
            s.blocked = false;
            s.reader_id = None;
            return true;
        }
        false
    }
}

/// Opens the reader's connection and records its client id.
async fn connect(inner: &Inner) -> redis::RedisResult<MultiplexedConnection> {
    let cfg = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(None);
    let mut conn = inner
        .client
        .get_multiplexed_async_connection_with_config(&cfg)
        .await?;
    let id: i64 = redis::cmd("CLIENT")
        .arg("ID")
        .query_async(&mut conn)
        .await?;
    lock(&inner.state).reader_id = Some(id);
    Ok(conn)
}

/// The reader: reads every subscribed stream while anybody is subscribed, then idles (and
/// stops after [`IDLE`] without subscriptions).
async fn read(inner: Arc<Inner>) {
    let mut conn: Option<MultiplexedConnection> = None;
    loop {
        let Some(plan) = inner.plan() else {
            let woken = tokio::time::timeout(IDLE, inner.wake.notified()).await;
            if woken.is_err() && inner.stop_if_idle() {
                return;
            }
            continue;
        };
        if plan.is_empty() {
            // Every subscriber's queue is full: wait for one to take its entries.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        }
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match connect(&inner).await {
                Ok(c) => conn.insert(c),
                Err(e) => {
                    lock(&inner.state).blocked = false;
                    tracing::warn!(error = %e, "Redis tail reader: no connection");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            },
        };
        let mut cmd = redis::cmd("XREAD");
        cmd.arg("COUNT")
            .arg(COUNT)
            .arg("BLOCK")
            .arg(inner.block_ms)
            .arg("STREAMS");
        for (key, _) in &plan {
            cmd.arg(key);
        }
        for (_, (ms, seq)) in &plan {
            cmd.arg(format!("{ms}-{seq}"));
        }
        let read: redis::RedisResult<ReadReply> = cmd.query_async(c).await;
        match read {
            Ok(reply) => inner.deliver(reply.unwrap_or_default()),
            Err(e) => {
                lock(&inner.state).blocked = false;
                conn = None;
                tracing::warn!(error = %e, "Redis tail reader: read failed");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}
