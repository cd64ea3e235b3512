#[cfg(unix)]
pub(crate) mod fd;
