//! [`RedisEventStore`]: handshake-era SSE events in Redis Streams, one Redis stream per SSE
//! stream of a session, so that any node can replay them and tail them live.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use ferromcp_dispatch::BoxFuture;
use redis::AsyncCommands;

use super::Node;
use crate::event_store::{EventStore, Replay, StoredEvent};

/// One entry of an XRANGE/XREAD reply: the entry id and its field/value pairs.
pub(crate) type Entry = (String, Vec<(String, Vec<u8>)>);

/// An XREAD reply: per key, its entries; `None` when the block timed out.
pub(crate) type ReadReply = Option<Vec<(String, Vec<Entry>)>>;

/// An [`EventStore`] in Redis, shared by every node of a deployment.
///
/// - Each SSE stream `T` of session `S` is the Redis stream `{ns}:e:{S}:{T}`; an event's
///   SSE id is `T:{entry id}` (e.g. `r0:1732931234567-0`): unique across the session's
///   streams (the stream name is part of it), ordered within its stream (Redis entry ids
///   only grow), and naming its stream, so a replay never mixes streams.
/// - Retention is bounded per stream (`XADD MAXLEN ~`, see
///   [`RedisConfig::events_per_stream`](super::RedisConfig::events_per_stream)); resuming
///   from an event that was trimmed away fails, as it does in memory.
/// - Every key expires after the session idle timeout (plus a quarter of it: a key's TTL is
///   refreshed by a write at most once per quarter of the timeout, so that most writes are
///   one `XADD` alone), and a session's keys are deleted when the session ends
///   ([`forget`](EventStore::forget)).
///
/// Built by [`RedisStores::connect`](super::RedisStores::connect).
#[derive(Clone)]
pub struct RedisEventStore {
    pub(crate) node: Arc<Node>,
}

impl fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisEventStore")
            .field("namespace", &self.node.ns)
            .finish_non_exhaustive()
    }
}

/// Splits an SSE event id into its stream name and Redis entry id; `None` when it is not
/// one this store issued (tampered, overlong or of another shape).
pub(crate) fn parse_event_id(id: &str) -> Option<(&str, &str)> {
    if id.len() > 128 {
        return None;
    }
    let (stream, entry) = id.split_once(':')?;
    if !valid_stream_name(stream) {
        return None;
    }
    let (ms, seq) = entry.split_once('-')?;
    let numeric = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    (numeric(ms) && numeric(seq)).then_some((stream, entry))
}

/// Stream names are short and alphanumeric (`g`, `r0`, `f1a2b…`).
pub(crate) fn valid_stream_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 40 && s.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The data field of an entry.
pub(crate) fn entry_data(fields: Vec<(String, Vec<u8>)>) -> Bytes {
    fields
        .into_iter()
        .find(|(k, _)| k == "d")
        .map(|(_, v)| Bytes::from(v))
        .unwrap_or_default()
}

impl Node {
    /// Appends an event to `stream` of `session`; returns its SSE id.
    pub(crate) async fn append(
        &self,
        session: &str,
        stream: &str,
        data: &[u8],
    ) -> redis::RedisResult<String> {
        let key = self.events_key(session, stream);
        let index = self.index_key(session);
        let ttl = self.ttl_ms();
        let mut conn = self.conn.clone();
        // One round trip: the XADD, and, at most once per refresh interval, the stream's
        // TTL and its registration in the session's index (and the index's TTL).
        let mut pipe = redis::pipe();
        pipe.cmd("XADD")
            .arg(&key)
            .arg("MAXLEN")
            .arg("~")
            .arg(self.per_stream)
            .arg("*")
            .arg("d")
            .arg(data);
        if self.due(&key) {
            pipe.cmd("PEXPIRE")
                .arg(&key)
                .arg(ttl)
                .ignore()
                .cmd("SADD")
                .arg(&index)
                .arg(stream)
                .ignore();
        }
        if self.due(&index) {
            pipe.cmd("PEXPIRE").arg(&index).arg(ttl).ignore();
        }
        let (entry,): (String,) = pipe.query_async(&mut conn).await?;
        Ok(format!("{stream}:{entry}"))
    }

    /// The events of the stream of `last` after it; `None` when `last` is unknown.
    pub(crate) async fn replay(
        &self,
        session: &str,
        last: &str,
    ) -> redis::RedisResult<Option<Replay>> {
        let Some((stream, entry)) = parse_event_id(last) else {
            return Ok(None);
        };
        let key = self.events_key(session, stream);
        let mut conn = self.conn.clone();
        // From the event itself: it must still be stored (not trimmed, not forged).
        let entries: Vec<Entry> = conn.xrange(&key, entry, "+").await?;
        let mut it = entries.into_iter();
        match it.next() {
            Some((id, _)) if id == entry => {}
            _ => return Ok(None),
        }
        let events = it
            .map(|(id, fields)| StoredEvent {
                id: format!("{stream}:{id}"),
                data: entry_data(fields),
            })
            .collect();
        Ok(Some(Replay {
            stream: stream.to_owned(),
            events,
        }))
    }

    /// Deletes every event key of `session`.
    pub(crate) async fn forget_events(&self, session: &str) -> redis::RedisResult<()> {
        self.forget_refreshes(session);
        let index = self.index_key(session);
        let mut conn = self.conn.clone();
        let streams: Vec<String> = conn.smembers(&index).await?;
        let mut keys: Vec<String> = streams
            .iter()
            .filter(|s| valid_stream_name(s))
            .map(|s| self.events_key(session, s))
            .collect();
        keys.push(index);
        let _: () = conn.del(keys).await?;
        Ok(())
    }
}

impl EventStore for RedisEventStore {
    fn store<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: Bytes,
    ) -> BoxFuture<'a, String> {
        Box::pin(async move {
            match self.node.append(session, stream, &data).await {
                Ok(id) => id,
                Err(e) => {
                    // The event still goes out live; it just cannot be resumed (its id is
                    // unknown to every replay).
                    tracing::warn!(error = %e, "Redis event store: event not stored");
                    format!("{stream}:0-0")
                }
            }
        })
    }

    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        last_event_id: &'a str,
    ) -> BoxFuture<'a, Option<Replay>> {
        Box::pin(async move {
            self.node
                .replay(session, last_event_id)
                .await
                .unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "Redis event store: replay failed");
                    None
                })
        })
    }

    fn forget<'a>(&'a self, session: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Err(e) = self.node.forget_events(session).await {
                tracing::debug!(error = %e, "Redis event store: forget failed (keys expire)");
            }
        })
    }
}
