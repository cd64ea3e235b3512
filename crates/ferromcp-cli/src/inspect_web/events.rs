//! The event log the page shows: every message in both directions (with its time and, for
//! an answer, how long it took), progress, pending server→client requests and connection
//! changes. The last `event_buffer` events are kept and replayed to a page that (re)opens
//! the event stream; live events reach every open stream through a broadcast channel.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::sync::broadcast;

/// One event, serialized once (the same text goes to every stream).
pub(crate) type Event = Arc<str>;

/// The log.
#[derive(Debug)]
pub(crate) struct EventLog {
    inner: Mutex<Ring>,
    live: broadcast::Sender<Event>,
    capacity: usize,
    max_text: usize,
    started: Instant,
}

#[derive(Debug, Default)]
struct Ring {
    seq: u64,
    events: VecDeque<Event>,
}

impl EventLog {
    /// A log that keeps `capacity` events and cuts message texts at `max_text` bytes.
    pub(crate) fn new(capacity: usize, max_text: usize) -> Arc<Self> {
        let (live, _) = broadcast::channel(capacity.clamp(16, 4096));
        Arc::new(Self {
            inner: Mutex::new(Ring::default()),
            live,
            capacity,
            max_text,
            started: Instant::now(),
        })
    }

    /// Milliseconds since the inspector started.
    pub(crate) fn elapsed_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }

    /// Adds an event of `kind` with `fields` (an object): a sequence number, the wall-clock
    /// time and the time since start are added.
    pub(crate) fn push(&self, kind: &str, fields: Value) {
        let mut ring = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        ring.seq += 1;
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let mut event = json!({ "seq": ring.seq, "kind": kind, "time": wall as u64,
                                "t": self.elapsed_ms() });
        if let (Some(map), Value::Object(extra)) = (event.as_object_mut(), fields) {
            map.extend(extra);
        }
        let text: Event = event.to_string().into();
        if self.capacity > 0 {
            while ring.events.len() >= self.capacity {
                ring.events.pop_front();
            }
            ring.events.push_back(text.clone());
        }
        drop(ring);
        let _ = self.live.send(text);
    }

    /// A message's JSON text, cut to the bound (then marked as cut).
    pub(crate) fn text(&self, text: String) -> Value {
        if text.len() <= self.max_text {
            return Value::String(text);
        }
        let mut end = self.max_text;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Value::String(format!(
            "{}… ({} bytes cut)",
            &text[..end],
            text.len() - end
        ))
    }

    /// The kept events (oldest first) and a receiver for those that follow, taken together
    /// so none is missed or repeated.
    pub(crate) fn subscribe(&self) -> (Vec<Event>, broadcast::Receiver<Event>) {
        let ring = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let rx = self.live.subscribe();
        (ring.events.iter().cloned().collect(), rx)
    }

    /// The kept events, as a JSON array text.
    pub(crate) fn snapshot(&self) -> String {
        let ring = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let parts: Vec<&str> = ring.events.iter().map(|e| &**e).collect();
        format!("[{}]", parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::EventLog;
    use serde_json::json;

    /// S77: the replay buffer keeps the last `capacity` events; long texts are cut.
    #[test]
    fn s77_the_event_buffer_is_bounded() {
        let log = EventLog::new(3, 8);
        for i in 0..10 {
            log.push("note", json!({ "i": i }));
        }
        let (kept, _rx) = log.subscribe();
        assert_eq!(kept.len(), 3);
        assert!(kept[0].contains("\"i\":7"), "{}", kept[0]);
        let cut = log.text("é".repeat(10));
        assert!(
            cut.as_str().is_some_and(|s| s.contains("bytes cut")),
            "{cut}"
        );
        assert_eq!(log.text("short".into()), json!("short"));
    }
}
