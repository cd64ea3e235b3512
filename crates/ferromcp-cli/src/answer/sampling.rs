//! Answers `sampling/createMessage` with `--sampling-cmd CMD`: CMD (split shell-style) gets
//! the request's params as JSON on stdin and prints the `CreateMessageResult` as JSON on
//! stdout. A command that fails, runs past `--sampling-timeout` or prints invalid JSON or
//! more than `--sampling-max-output` bytes is an error answer to the server (with a short
//! reason) and a message on stderr (with the details).

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{CreateMessageRequestParams, CreateMessageResult};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long the sampling command may run, by default (`--sampling-timeout`).
pub(crate) const DEFAULT_SAMPLING_TIMEOUT: Duration = Duration::from_secs(60);
/// The most the sampling command may print on stdout, by default (`--sampling-max-output`).
pub(crate) const DEFAULT_SAMPLING_MAX_OUTPUT: usize = 1 << 20;

/// The sampling command and its limits.
#[derive(Debug, Clone)]
pub(crate) struct Sampler {
    pub(crate) argv: Arc<[String]>,
    pub(crate) timeout: Duration,
    pub(crate) max_output: usize,
}

/// Why the command gave no result: `(for the server, for stderr)`.
type Failure = (String, String);

impl Sampler {
    /// Answers one sampling request.
    pub(crate) async fn answer(
        self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        self.run(&params).await.map_err(|(short, long)| {
            eprintln!("ferromcp: --sampling-cmd: {long}; answering the server with an error");
            ErrorObject::internal_error(format!("the client's sampling command failed: {short}"))
        })
    }

    async fn run(
        &self,
        params: &CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, Failure> {
        let program = self.argv.first().map(String::as_str).unwrap_or_default();
        let input = serde_json::to_vec(params).map_err(|e| {
            (
                "invalid request".to_owned(),
                format!("cannot encode the request: {e}"),
            )
        })?;
        let mut child = tokio::process::Command::new(program)
            .args(self.argv.iter().skip(1))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                (
                    "cannot start".to_owned(),
                    format!("cannot start {program:?}: {e}"),
                )
            })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let limit = self.max_output;
        let work = async {
            let write = async move {
                if let Some(mut s) = stdin {
                    // A command that does not read its input is not an error.
                    let _ = s.write_all(&input).await;
                }
            };
            let read = async move {
                let mut buf = Vec::new();
                if let Some(out) = stdout {
                    out.take(limit as u64 + 1).read_to_end(&mut buf).await?;
                }
                Ok::<_, std::io::Error>(buf)
            };
            let ((), out) = tokio::join!(write, read);
            let out =
                out.map_err(|e| ("read error".to_owned(), format!("reading its output: {e}")))?;
            if out.len() > limit {
                return Err((
                    "output too large".to_owned(),
                    format!("it printed more than {limit} bytes (--sampling-max-output)"),
                ));
            }
            let status = child
                .wait()
                .await
                .map_err(|e| ("wait error".to_owned(), format!("waiting for it: {e}")))?;
            Ok((status, out))
        };
        let (status, out) = match tokio::time::timeout(self.timeout, work).await {
            Ok(r) => r?,
            Err(_) => {
                return Err((
                    "timed out".to_owned(),
                    format!(
                        "it did not finish within {} s (--sampling-timeout); stopped",
                        self.timeout.as_secs_f64()
                    ),
                ));
            }
        };
        if !status.success() {
            return Err((
                "non-zero exit".to_owned(),
                format!("it exited with {status}"),
            ));
        }
        serde_json::from_slice(&out).map_err(|e| {
            (
                "invalid result".to_owned(),
                format!("its output is not a CreateMessageResult JSON object: {e}"),
            )
        })
    }
}
