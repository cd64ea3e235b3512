//! The bounded JSON Schema validator: every keyword, `$ref`s, schemars output, draft-07
//! spellings, limits and error messages.
#![allow(clippy::unwrap_used, clippy::panic, clippy::needless_pass_by_value)]

mod differential;
mod errors;
mod keywords;
mod limits;
mod refs;
mod schemars_output;
mod support;
