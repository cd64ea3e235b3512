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
/// - A request stream's priming event has the entry id `0-{tag}`, below every entry Redis
///   numbers itself, the tag a hash of the session and stream names (the same on every
///   node): its id is known before it is stored ([`EventStore::priming_id`]), so the owner
///   sends it at once and stores it with the stream's next event, one pipeline of both
///   `XADD`s ([`EventStore::store_primed`]): a request answered at once costs the owner one
///   round trip. Until then a replay from that id, on any node, is the stream with no
///   event after it (then tailed), and the same id in another session is unknown.
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

/// The entry id of the priming event of request stream `stream` of `session`: `0-{tag}`,
/// the tag the 64-bit FNV-1a hash of both names (stable across nodes and builds), never 0.
pub(crate) fn priming_entry(session: &str, stream: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in session
        .as_bytes()
        .iter()
        .chain(&[0xff])
        .chain(stream.as_bytes())
    {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut entry = String::with_capacity(22);
    entry.push_str("0-");
    crate::legacy::streams::push_decimal(&mut entry, h.max(1));
    entry
}

impl Node {
    /// Appends an event to `stream` of `session`; returns its SSE id.
    pub(crate) async fn append(
        &self,
        session: &str,
        stream: &str,
        data: &[u8],
    ) -> redis::RedisResult<String> {
        self.append_after(session, stream, None, data).await
    }

    /// Appends an event to `stream` of `session`, after the stream's priming event (entry
    /// `priming`) when given, in one round trip; returns the event's SSE id.
    async fn append_after(
        &self,
        session: &str,
        stream: &str,
        priming: Option<&str>,
        data: &[u8],
    ) -> redis::RedisResult<String> {
        let key = self.events_key(session, stream);
        let index = self.index_key(session);
        let ttl = self.ttl_ms();
        let mut conn = self.conn.clone();
        // One round trip: the XADD (after the priming event's), and, at most once per
        // refresh interval, the stream's TTL and its registration in the session's index
        // (and the index's TTL).
        let mut pipe = redis::pipe();
        if let Some(entry) = priming {
            pipe.cmd("XADD")
                .arg(&key)
                .arg("MAXLEN")
                .arg("~")
                .arg(self.per_stream)
                .arg(entry)
                .arg("d")
                .arg(&[] as &[u8])
                .ignore();
        }
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
            // A request stream's priming event, sent but not stored yet: nothing after it.
            None if entry == priming_entry(session, stream) => {}
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

    fn priming_id(&self, session: &str, stream: &str) -> Option<String> {
        let entry = priming_entry(session, stream);
        let mut id = String::with_capacity(stream.len() + 1 + entry.len());
        id.push_str(stream);
        id.push(':');
        id.push_str(&entry);
        Some(id)
    }

    fn store_primed<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: Bytes,
    ) -> BoxFuture<'a, String> {
        Box::pin(async move {
            let priming = priming_entry(session, stream);
            match self
                .node
                .append_after(session, stream, Some(&priming), &data)
                .await
            {
                Ok(id) => id,
                Err(e) => {
                    tracing::warn!(error = %e, "Redis event store: events not stored");
                    format!("{stream}:0-0")
                }
            }
        })
    }
}
