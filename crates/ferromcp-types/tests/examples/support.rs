//! What the topics of this test binary share.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Decodes `v` as `T`, encodes it again and compares the JSON values.
pub(crate) fn roundtrip<T: Serialize + DeserializeOwned>(v: &Value) -> Result<T, String> {
    let t: T = serde_json::from_value(v.clone()).map_err(|e| format!("decode: {e}"))?;
    let back = serde_json::to_value(&t).map_err(|e| format!("encode: {e}"))?;
    if &back != v {
        return Err(format!("round trip differs:\n  in:  {v}\n  out: {back}"));
    }
    // Decoding from text must agree with decoding from a `Value`.
    let text = serde_json::to_string(v).map_err(|e| e.to_string())?;
    let t2: T = serde_json::from_str(&text).map_err(|e| format!("decode text: {e}"))?;
    if serde_json::to_value(&t2).map_err(|e| e.to_string())? != back {
        return Err("decoding from text differs from decoding a Value".into());
    }
    Ok(t)
}
