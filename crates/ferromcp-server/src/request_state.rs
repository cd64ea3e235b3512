//! Sealed `requestState` for 2026-07-28 multi-round requests (`InputRequiredResult`).
//!
//! The server hands the client an opaque `requestState` string and the client echoes it on
//! the retry. [`StateSealer`] makes that string safe to hand out: it is encrypted and
//! authenticated (AES-256-GCM), bound to the request it was issued for ([`Binding`]: method,
//! target, a digest of the arguments, the principal, and the sealer's audience), and it
//! expires. Opening a state that was tampered with, replayed against another request or
//! principal, issued under a key no longer kept, or too old fails with a [`StateError`], whose
//! [kind](StateError::kind) is logged (at `debug`) and which always maps to one protocol
//! error: -32602 `"Invalid or expired requestState"` with data
//! `{"reason": "invalid_request_state"}` ([`StateError::to_error_object`]).
//!
//! ```
//! use std::time::SystemTime;
//! use ferromcp_server::request_state::{Binding, KeyRing, StateSealer};
//! use serde_json::json;
//!
//! # if cfg!(not(feature = "request-state")) { return; } // sealing needs the feature
//! let sealer = StateSealer::new(KeyRing::ephemeral().unwrap());
//! let binding = Binding::new("tools/call", "book_flight", Some(&json!({"to": "LIS"})));
//! let now = SystemTime::now();
//! let token = sealer.seal(&binding, b"step 2", now).unwrap();
//! assert_eq!(sealer.open(&token, &binding, now).unwrap(), b"step 2");
//!
//! let other = Binding::new("tools/call", "book_flight", Some(&json!({"to": "OPO"})));
//! assert!(sealer.open(&token, &other, now).is_err());
//! ```
//!
//! # Format
//!
//! `"v1." + base64url_nopad(key_id (4 bytes, big-endian) ‖ nonce (12) ‖ ciphertext ‖ tag (16))`.
//! The plaintext is `issued_at_ms (u64 BE) ‖ expires_at_ms (u64 BE) ‖ payload`. The binding is
//! the AEAD's associated data, so it is not in the token at all and a state opened under a
//! different binding fails authentication. Each key's AES key is derived from its 32-byte
//! secret with HKDF-SHA256 (salt `"ferromcp requestState"`, info
//! `"ferromcp/requestState/v1/aes-256-gcm"`). Nonces are random; rotate keys well before
//! 2^32 seals under one key.
//!
//! # Feature `request-state`
//!
//! The AES-GCM and HKDF code is compiled only with the crate feature `request-state` (on by
//! default; the facade `ferromcp` turns it on with its own `request-state` feature). Without
//! it the API is the same, but [`StateSealer::seal`] and [`StateSealer::open`] fail with
//! [`StateErrorKind::Unavailable`]: a 2026-07-28 request that needs input from the client
//! (elicitation, sampling, resolvers over several rounds) is answered with an internal error
//! naming the feature, while everything else, the handshake era's server-to-client requests
//! included, works as before.

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[cfg(feature = "request-state")]
use aes_gcm::aead::{Aead, KeyInit, Payload};
#[cfg(feature = "request-state")]
use aes_gcm::{Aes256Gcm, Key, Nonce};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject};
#[cfg(feature = "request-state")]
use hkdf::Hkdf;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The prefix of every token this module issues.
pub const TOKEN_PREFIX: &str = "v1.";
/// The default lifetime of a sealed state: 10 minutes.
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);
/// The default longest token [`StateSealer::open`] looks at, and [`StateSealer::seal`]
/// produces: 64 KiB.
pub const DEFAULT_MAX_TOKEN_LEN: usize = 64 * 1024;
/// The default number of previous keys a [`KeyRing`] keeps after rotations.
pub const DEFAULT_RETAINED_KEYS: usize = 2;
/// The default tolerance for an issued-at time in the future (clock steps between nodes).
pub const DEFAULT_CLOCK_SKEW: Duration = Duration::from_secs(60);
/// The message of the protocol error every open failure maps to.
pub const INVALID_REQUEST_STATE_MESSAGE: &str = "Invalid or expired requestState";
/// The `reason` in the data of that protocol error.
pub const INVALID_REQUEST_STATE_REASON: &str = "invalid_request_state";
/// Top-level argument keys [`arguments_digest`] leaves out: they change between rounds.
pub const EXCLUDED_ARGUMENT_KEYS: [&str; 3] = ["inputResponses", "requestState", "_meta"];

const KEY_ID_LEN: usize = 4;
const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;
const HEADER_LEN: usize = 16;
#[cfg(feature = "request-state")]
const HKDF_SALT: &[u8] = b"ferromcp requestState";
#[cfg(feature = "request-state")]
const HKDF_INFO_AEAD: &[u8] = b"ferromcp/requestState/v1/aes-256-gcm";
const AAD_CONTEXT: &[u8] = b"ferromcp/requestState/v1";

/// One sealing key: an id (carried in tokens to pick the key on open) and the AES key derived
/// from a 32-byte secret. The secret itself is not kept; `Debug` shows only the id.
#[derive(Clone)]
pub struct StateKey {
    id: u32,
    #[cfg(feature = "request-state")]
    cipher: Aes256Gcm,
}

impl StateKey {
    /// A key with the given id, derived from `secret` (32 bytes of high-entropy secret, e.g.
    /// from a secret store; share it between the nodes that must open each other's states).
    pub fn new(id: u32, secret: &[u8; 32]) -> Self {
        #[cfg(not(feature = "request-state"))]
        {
            let _ = secret;
            Self { id }
        }
        #[cfg(feature = "request-state")]
        Self::derive(id, secret)
    }

    #[cfg(feature = "request-state")]
    fn derive(id: u32, secret: &[u8; 32]) -> Self {
        let hk = Hkdf::<Sha256>::new(Some(HKDF_SALT), secret);
        let mut okm = [0u8; 32];
        if hk.expand(HKDF_INFO_AEAD, &mut okm).is_err() {
            // Unreachable: HKDF-SHA256 can expand up to 8160 bytes. Never fall back to a
            // constant key: hash the secret with the info instead.
            okm = Sha256::new()
                .chain_update(HKDF_INFO_AEAD)
                .chain_update(secret)
                .finalize()
                .into();
        }
        let cipher = Aes256Gcm::new(&Key::<Aes256Gcm>::from(okm));
        Self { id, cipher }
    }

    /// A key with a random id and a random secret from the operating system's RNG.
    pub fn random() -> Result<Self, StateError> {
        let mut bytes = [0u8; 36];
        fill_random(&mut bytes)?;
        let mut id = [0u8; KEY_ID_LEN];
        id.copy_from_slice(&bytes[..KEY_ID_LEN]);
        let mut secret = [0u8; 32];
        secret.copy_from_slice(&bytes[KEY_ID_LEN..]);
        Ok(Self::new(u32::from_be_bytes(id), &secret))
    }

    /// The key's id.
    pub fn id(&self) -> u32 {
        self.id
    }
}

/// The AEAD, with the `request-state` feature.
#[cfg(feature = "request-state")]
impl StateKey {
    fn encrypt(
        &self,
        nonce: [u8; NONCE_LEN],
        plaintext: &[u8],
        aad: &[u8],
    ) -> Result<Vec<u8>, StateError> {
        let payload = Payload {
            msg: plaintext,
            aad,
        };
        self.cipher
            .encrypt(&Nonce::from(nonce), payload)
            .map_err(|_| StateError::new(StateErrorKind::PayloadTooLarge))
    }

    fn decrypt(
        &self,
        nonce: [u8; NONCE_LEN],
        sealed: &[u8],
        aad: &[u8],
    ) -> Result<Vec<u8>, StateError> {
        let payload = Payload { msg: sealed, aad };
        self.cipher
            .decrypt(&Nonce::from(nonce), payload)
            .map_err(|_| StateError::new(StateErrorKind::Unauthenticated))
    }
}

/// Without the `request-state` feature: no AEAD, every seal and open fails.
#[cfg(not(feature = "request-state"))]
impl StateKey {
    #[allow(clippy::unused_self)]
    fn encrypt(&self, _: [u8; NONCE_LEN], _: &[u8], _: &[u8]) -> Result<Vec<u8>, StateError> {
        Err(StateError::new(StateErrorKind::Unavailable))
    }

    #[allow(clippy::unused_self)]
    fn decrypt(&self, _: [u8; NONCE_LEN], _: &[u8], _: &[u8]) -> Result<Vec<u8>, StateError> {
        Err(StateError::new(StateErrorKind::Unavailable))
    }
}

impl fmt::Debug for StateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// The keys of a [`StateSealer`]: the current key, which seals, and up to
/// [`retained`](Self::retained) previous keys, which still open the states they sealed.
/// Key ids should be distinct.
#[derive(Clone, Debug)]
pub struct KeyRing {
    current: StateKey,
    previous: VecDeque<StateKey>,
    retained: usize,
}

impl KeyRing {
    /// A ring with `current` and no previous keys, keeping [`DEFAULT_RETAINED_KEYS`] on
    /// rotation.
    pub fn new(current: StateKey) -> Self {
        Self {
            current,
            previous: VecDeque::new(),
            retained: DEFAULT_RETAINED_KEYS,
        }
    }

    /// A ring with one random key: states survive neither a restart nor a hop to another
    /// node. Fails only if the operating system's RNG fails.
    pub fn ephemeral() -> Result<Self, StateError> {
        StateKey::random().map(Self::new)
    }

    /// Sets how many previous keys the ring keeps (dropping the oldest beyond that).
    #[must_use]
    pub fn with_retained(mut self, retained: usize) -> Self {
        self.retained = retained;
        self.previous.truncate(retained);
        self
    }

    /// Adds an older key, still accepted for opening, after the ones already there (for a
    /// ring built from configuration). Kept only within [`retained`](Self::retained).
    #[must_use]
    pub fn with_previous(mut self, key: StateKey) -> Self {
        self.previous.push_back(key);
        self.previous.truncate(self.retained);
        self
    }

    /// Makes `key` the current key; the old current key becomes the newest previous key and
    /// the oldest beyond [`retained`](Self::retained) is dropped (its states no longer open).
    pub fn rotate(&mut self, key: StateKey) {
        let old = std::mem::replace(&mut self.current, key);
        self.previous.push_front(old);
        self.previous.truncate(self.retained);
    }

    /// How many previous keys the ring keeps.
    pub fn retained(&self) -> usize {
        self.retained
    }

    /// The id of the key that seals.
    pub fn current_id(&self) -> u32 {
        self.current.id
    }

    /// The ids of all keys that open, current first.
    pub fn key_ids(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::once(&self.current)
            .chain(&self.previous)
            .map(StateKey::id)
    }

    fn find(&self, id: u32) -> Option<&StateKey> {
        std::iter::once(&self.current)
            .chain(&self.previous)
            .find(|k| k.id == id)
    }
}

/// Settings of a [`StateSealer`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SealerConfig {
    /// How long a sealed state stays valid. Default [`DEFAULT_TTL`].
    pub ttl: Duration,
    /// The longest token accepted (and produced). Default [`DEFAULT_MAX_TOKEN_LEN`].
    pub max_token_len: usize,
    /// How far in the future an issued-at time may be. Default [`DEFAULT_CLOCK_SKEW`].
    pub clock_skew: Duration,
    /// Bound into every state (e.g. the server's name), so that servers sharing a key cannot
    /// open each other's states. Default `None`.
    pub audience: Option<String>,
}

impl Default for SealerConfig {
    fn default() -> Self {
        Self {
            ttl: DEFAULT_TTL,
            max_token_len: DEFAULT_MAX_TOKEN_LEN,
            clock_skew: DEFAULT_CLOCK_SKEW,
            audience: None,
        }
    }
}

impl SealerConfig {
    /// Sets [`ttl`](Self::ttl).
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Sets [`max_token_len`](Self::max_token_len).
    #[must_use]
    pub fn with_max_token_len(mut self, max: usize) -> Self {
        self.max_token_len = max;
        self
    }

    /// Sets [`clock_skew`](Self::clock_skew).
    #[must_use]
    pub fn with_clock_skew(mut self, skew: Duration) -> Self {
        self.clock_skew = skew;
        self
    }

    /// Sets [`audience`](Self::audience).
    #[must_use]
    pub fn with_audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }
}

/// What a sealed state is bound to: the request it was issued for and who made it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Binding {
    /// The method: `tools/call`, `prompts/get` or `resources/read`.
    pub method: String,
    /// The tool name, prompt name or resource URI.
    pub target: String,
    /// SHA-256 of the canonical JSON of the arguments ([`arguments_digest`]).
    pub arguments_digest: [u8; 32],
    /// The authenticated principal, if any.
    pub principal: Option<String>,
}

impl Binding {
    /// A binding for `method` on `target` with these arguments (digested with
    /// [`arguments_digest`]) and no principal.
    pub fn new(
        method: impl Into<String>,
        target: impl Into<String>,
        arguments: Option<&Value>,
    ) -> Self {
        Self::with_digest(method, target, arguments_digest(arguments))
    }

    /// A binding with an already computed arguments digest and no principal.
    pub fn with_digest(
        method: impl Into<String>,
        target: impl Into<String>,
        arguments_digest: [u8; 32],
    ) -> Self {
        Self {
            method: method.into(),
            target: target.into(),
            arguments_digest,
            principal: None,
        }
    }

    /// Binds to an authenticated principal (e.g. the token's subject and issuer).
    #[must_use]
    pub fn with_principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// The associated data: every field length-prefixed, so no two bindings encode alike.
    fn aad(&self, audience: Option<&str>, key_id: u32) -> Vec<u8> {
        fn field(out: &mut Vec<u8>, value: Option<&str>) {
            match value {
                None => out.push(0),
                Some(v) => {
                    out.push(1);
                    out.extend_from_slice(&(v.len() as u64).to_be_bytes());
                    out.extend_from_slice(v.as_bytes());
                }
            }
        }
        let mut out =
            Vec::with_capacity(AAD_CONTEXT.len() + 64 + self.method.len() + self.target.len() + 32);
        out.extend_from_slice(AAD_CONTEXT);
        out.extend_from_slice(&key_id.to_be_bytes());
        field(&mut out, audience);
        field(&mut out, Some(&self.method));
        field(&mut out, Some(&self.target));
        out.extend_from_slice(&self.arguments_digest);
        field(&mut out, self.principal.as_deref());
        out
    }
}

/// SHA-256 of the canonical JSON ([`canonical_json`]) of a request's arguments, with the
/// top-level keys of [`EXCLUDED_ARGUMENT_KEYS`] left out. Absent arguments and `null` digest
/// like `{}`, so a client may send either on the retry.
pub fn arguments_digest(arguments: Option<&Value>) -> [u8; 32] {
    let mut hasher = Sha256::new();
    match arguments {
        None | Some(Value::Null) => hasher.update(b"{}"),
        Some(Value::Object(map)) => {
            let kept: serde_json::Map<String, Value> = map
                .iter()
                .filter(|(k, _)| !EXCLUDED_ARGUMENT_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            write_canonical(&Value::Object(kept), &mut |s| hasher.update(s.as_bytes()));
        }
        Some(other) => write_canonical(other, &mut |s| hasher.update(s.as_bytes())),
    }
    hasher.finalize().into()
}

/// The canonical JSON of `value`: compact, object keys sorted by their UTF-8 bytes at every
/// level, strings escaped as `serde_json` does and numbers printed as `serde_json` prints them.
/// For a `Value` this equals `serde_json::to_string` when `serde_json` is built without
/// `preserve_order` (its maps are then sorted); this function sorts explicitly, so it stays
/// canonical whichever features the build enables. It does not recurse, so deep input cannot
/// overflow the stack.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut |s| out.push_str(s));
    out
}

fn write_canonical(value: &Value, out: &mut impl FnMut(&str)) {
    enum Item<'a> {
        Value(&'a Value),
        Key(&'a str),
        Raw(&'static str),
    }
    let mut stack = vec![Item::Value(value)];
    while let Some(item) = stack.pop() {
        match item {
            Item::Raw(s) => out(s),
            Item::Key(k) => write_json_string(k, out),
            Item::Value(v) => match v {
                Value::Null => out("null"),
                Value::Bool(b) => out(if *b { "true" } else { "false" }),
                Value::Number(n) => out(&n.to_string()),
                Value::String(s) => write_json_string(s, out),
                Value::Array(items) => {
                    out("[");
                    stack.push(Item::Raw("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Item::Value(item));
                        if i > 0 {
                            stack.push(Item::Raw(","));
                        }
                    }
                }
                Value::Object(map) => {
                    out("{");
                    stack.push(Item::Raw("}"));
                    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                    for (i, (k, v)) in entries.into_iter().enumerate().rev() {
                        stack.push(Item::Value(v));
                        stack.push(Item::Raw(":"));
                        stack.push(Item::Key(k));
                        if i > 0 {
                            stack.push(Item::Raw(","));
                        }
                    }
                }
            },
        }
    }
}

fn write_json_string(s: &str, out: &mut impl FnMut(&str)) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out("\"");
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let escape = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{08}' => "\\b",
            '\u{0c}' => "\\f",
            c if (c as u32) < 0x20 => "",
            _ => continue,
        };
        out(&s[start..i]);
        if escape.is_empty() {
            let b = c as u8;
            let hex = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ];
            out(std::str::from_utf8(&hex).unwrap_or_default());
        } else {
            out(escape);
        }
        start = i + c.len_utf8();
    }
    out(&s[start..]);
    out("\"");
}

/// Why a state could not be sealed or opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateErrorKind {
    /// Open: the token is longer than [`SealerConfig::max_token_len`].
    TooLong,
    /// Open: not `v1.` + base64url, or too short to hold a sealed state.
    Malformed,
    /// Open: sealed under a key id the ring does not hold (unknown, or rotated out).
    UnknownKey,
    /// Open: authentication failed: the token was altered, or it is opened under another
    /// binding (method, target, arguments, principal, audience) than it was sealed for.
    Unauthenticated,
    /// Open: the state's lifetime is over.
    Expired,
    /// Open: the state claims to be issued further in the future than the clock skew allows.
    NotYetValid,
    /// Seal: the token would be longer than [`SealerConfig::max_token_len`].
    PayloadTooLarge,
    /// Seal or key generation: the operating system's RNG failed.
    Random,
    /// Seal or open: the crate was built without its `request-state` feature (no AES-GCM).
    Unavailable,
}

impl StateErrorKind {
    /// A short name for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TooLong => "too_long",
            Self::Malformed => "malformed",
            Self::UnknownKey => "unknown_key",
            Self::Unauthenticated => "unauthenticated",
            Self::Expired => "expired",
            Self::NotYetValid => "not_yet_valid",
            Self::PayloadTooLarge => "payload_too_large",
            Self::Random => "rng_failure",
            Self::Unavailable => "unavailable",
        }
    }

    fn is_seal_side(self) -> bool {
        matches!(
            self,
            Self::PayloadTooLarge | Self::Random | Self::Unavailable
        )
    }
}

impl fmt::Display for StateErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A state that could not be sealed or opened. Carries only its [kind](Self::kind), never
/// the token or a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("requestState rejected: {kind}")]
#[non_exhaustive]
pub struct StateError {
    kind: StateErrorKind,
}

impl StateError {
    fn new(kind: StateErrorKind) -> Self {
        Self { kind }
    }

    /// Why it failed (for logs and metrics; the client sees one error for all open failures).
    pub fn kind(&self) -> StateErrorKind {
        self.kind
    }

    /// The protocol error to answer with. Every open failure is -32602
    /// `"Invalid or expired requestState"` with data `{"reason": "invalid_request_state"}`;
    /// a seal failure (the server's own problem) is -32603 `"Internal error"`.
    pub fn to_error_object(&self) -> ErrorObject {
        if self.kind == StateErrorKind::Unavailable {
            return ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                "This server cannot ask for input at 2026-07-28: it was built without \
                 ferromcp-server's `request-state` feature",
            );
        }
        if self.kind.is_seal_side() {
            return ErrorObject::new(ErrorCode::INTERNAL_ERROR, "Internal error");
        }
        ErrorObject::new(ErrorCode::INVALID_PARAMS, INVALID_REQUEST_STATE_MESSAGE)
            .with_data(serde_json::json!({ "reason": INVALID_REQUEST_STATE_REASON }))
    }
}

impl From<StateError> for ErrorObject {
    fn from(e: StateError) -> Self {
        e.to_error_object()
    }
}

/// Seals and opens `requestState` tokens. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct StateSealer {
    keys: KeyRing,
    config: SealerConfig,
}

impl StateSealer {
    /// A sealer over `keys` with the default [`SealerConfig`].
    pub fn new(keys: KeyRing) -> Self {
        Self::with_config(keys, SealerConfig::default())
    }

    /// A sealer over `keys` with `config`.
    pub fn with_config(keys: KeyRing, config: SealerConfig) -> Self {
        Self { keys, config }
    }

    /// The settings.
    pub fn config(&self) -> &SealerConfig {
        &self.config
    }

    /// The keys.
    pub fn keys(&self) -> &KeyRing {
        &self.keys
    }

    /// Rotates to a new current key ([`KeyRing::rotate`]).
    pub fn rotate(&mut self, key: StateKey) {
        self.keys.rotate(key);
    }

    /// Seals `payload` for the request `binding` describes, issued at `now`.
    pub fn seal(
        &self,
        binding: &Binding,
        payload: &[u8],
        now: SystemTime,
    ) -> Result<String, StateError> {
        let raw_len = KEY_ID_LEN + NONCE_LEN + HEADER_LEN + payload.len() + TAG_LEN;
        let token_len = TOKEN_PREFIX.len() + raw_len.div_ceil(3) * 4;
        if token_len > self.config.max_token_len {
            return Err(StateError::new(StateErrorKind::PayloadTooLarge));
        }
        let key = &self.keys.current;
        let issued = unix_millis(now);
        let ttl = u64::try_from(self.config.ttl.as_millis()).unwrap_or(u64::MAX);
        let mut plaintext = Vec::with_capacity(HEADER_LEN + payload.len());
        plaintext.extend_from_slice(&issued.to_be_bytes());
        plaintext.extend_from_slice(&issued.saturating_add(ttl).to_be_bytes());
        plaintext.extend_from_slice(payload);
        let mut nonce = [0u8; NONCE_LEN];
        fill_random(&mut nonce)?;
        let aad = binding.aad(self.config.audience.as_deref(), key.id);
        let sealed = key.encrypt(nonce, &plaintext, &aad)?;
        let mut raw = Vec::with_capacity(raw_len);
        raw.extend_from_slice(&key.id.to_be_bytes());
        raw.extend_from_slice(&nonce);
        raw.extend_from_slice(&sealed);
        let mut token = String::with_capacity(token_len);
        token.push_str(TOKEN_PREFIX);
        URL_SAFE_NO_PAD.encode_string(&raw, &mut token);
        Ok(token)
    }

    /// Opens a token sealed for `binding`, checked at `now`, and returns its payload. Any
    /// failure is logged (its kind only) and returned as a [`StateError`].
    pub fn open(
        &self,
        token: &str,
        binding: &Binding,
        now: SystemTime,
    ) -> Result<Vec<u8>, StateError> {
        let result = self.open_inner(token, binding, now);
        if let Err(e) = &result {
            tracing::debug!(
                reason = e.kind.as_str(),
                method = %binding.method,
                token_len = token.len(),
                "requestState rejected"
            );
        }
        result
    }

    fn open_inner(
        &self,
        token: &str,
        binding: &Binding,
        now: SystemTime,
    ) -> Result<Vec<u8>, StateError> {
        use StateErrorKind as K;
        if token.len() > self.config.max_token_len {
            return Err(StateError::new(K::TooLong));
        }
        let body = token
            .strip_prefix(TOKEN_PREFIX)
            .ok_or(StateError::new(K::Malformed))?;
        let raw = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| StateError::new(K::Malformed))?;
        if raw.len() < KEY_ID_LEN + NONCE_LEN + HEADER_LEN + TAG_LEN {
            return Err(StateError::new(K::Malformed));
        }
        let (id, rest) = raw.split_at(KEY_ID_LEN);
        let (nonce, sealed) = rest.split_at(NONCE_LEN);
        let mut id_bytes = [0u8; KEY_ID_LEN];
        id_bytes.copy_from_slice(id);
        let mut nonce_bytes = [0u8; NONCE_LEN];
        nonce_bytes.copy_from_slice(nonce);
        let key_id = u32::from_be_bytes(id_bytes);
        let key = self
            .keys
            .find(key_id)
            .ok_or(StateError::new(K::UnknownKey))?;
        let aad = binding.aad(self.config.audience.as_deref(), key_id);
        let mut plaintext = key.decrypt(nonce_bytes, sealed, &aad)?;
        if plaintext.len() < HEADER_LEN {
            return Err(StateError::new(K::Malformed));
        }
        let mut word = [0u8; 8];
        word.copy_from_slice(&plaintext[..8]);
        let issued = u64::from_be_bytes(word);
        word.copy_from_slice(&plaintext[8..HEADER_LEN]);
        let expires = u64::from_be_bytes(word);
        let now = unix_millis(now);
        let skew = u64::try_from(self.config.clock_skew.as_millis()).unwrap_or(u64::MAX);
        if issued > now.saturating_add(skew) {
            return Err(StateError::new(K::NotYetValid));
        }
        if now >= expires {
            return Err(StateError::new(K::Expired));
        }
        plaintext.drain(..HEADER_LEN);
        Ok(plaintext)
    }
}

fn unix_millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn fill_random(buf: &mut [u8]) -> Result<(), StateError> {
    use rand_core::TryRngCore;
    rand_core::OsRng
        .try_fill_bytes(buf)
        .map_err(|_| StateError::new(StateErrorKind::Random))
}
