//! OTLP export of the CLI's traces and metrics, configured by the standard OpenTelemetry
//! environment variables.
//!
//! When `OTEL_EXPORTER_OTLP_ENDPOINT` is set (non-empty), [`init_from_env`] installs an
//! OpenTelemetry tracer and meter provider exporting OTLP over HTTP to that endpoint
//! (`/v1/traces` and `/v1/metrics` are appended, as the OTLP specification says), with:
//!
//! - `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (the default) or `http/json`; `grpc` is not
//!   built in (a warning, then `http/protobuf`);
//! - `OTEL_SERVICE_NAME` (and `OTEL_RESOURCE_ATTRIBUTES`): the resource; `ferromcp` when unset;
//! - the other `OTEL_EXPORTER_OTLP_*` variables the exporter reads itself (headers, timeout,
//!   per-signal endpoints).
//!
//! The spans are the server's and the client's (the `otel` features of `ferromcp-server` and
//! `ferromcp-client`), so `serve` and every command that acts as a client (`call`, `tools`,
//! `tool`, `inspect`, `bridge`) export theirs. The `tracing` bridge is installed as the main
//! thread's default subscriber (every command runs its runtime on that thread), next to a
//! stderr log layer at the `FERROMCP_LOG` level; the global log subscriber the commands set
//! up serves the other threads as before.
//!
//! Unset, nothing is installed and nothing costs anything: no thread, no runtime, no
//! subscriber. The exporter's HTTP client is hyper with rustls (ring, the Mozilla roots
//! compiled in), the stack the CLI's Streamable HTTP client already uses, run on a small
//! runtime of its own so that the SDK's export threads need no runtime of theirs.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt;

/// The largest collector response body read, in bytes (the OTLP answer is tiny).
const MAX_RESPONSE_BODY: usize = 4 * 1024 * 1024;
/// How long one export may take (connect, send, answer).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Keeps the export running; dropping it flushes what is buffered and shuts the pipeline down.
#[must_use = "dropping the guard ends the export"]
pub(crate) struct Guard {
    inner: Option<Installed>,
}

struct Installed {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
    _subscriber: tracing::subscriber::DefaultGuard,
    /// The runtime the exporter's HTTP client runs on; dropped last.
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let Some(mut installed) = self.inner.take() else {
            return;
        };
        if let Err(e) = installed.tracer.shutdown() {
            crate::stderr_log::status!("ferromcp: exporting traces failed: {e}");
        }
        if let Err(e) = installed.meter.shutdown() {
            crate::stderr_log::status!("ferromcp: exporting metrics failed: {e}");
        }
        if let Some(runtime) = installed.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(1));
        }
    }
}

/// Installs OTLP export when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (see the module docs);
/// call once, at the start of `main`, and keep the guard until the end.
pub(crate) fn init_from_env() -> Guard {
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_default();
    if endpoint.trim().is_empty() {
        return Guard { inner: None };
    }
    match install() {
        Ok(installed) => Guard {
            inner: Some(installed),
        },
        Err(e) => {
            eprintln!("ferromcp: OTLP export not started: {e}");
            Guard { inner: None }
        }
    }
}

/// The protocol `OTEL_EXPORTER_OTLP_PROTOCOL` asks for.
fn protocol_from_env() -> Protocol {
    match std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL").as_deref() {
        Ok("http/json") => Protocol::HttpJson,
        Ok("http/protobuf") | Err(_) => Protocol::HttpBinary,
        Ok(other) => {
            eprintln!(
                "ferromcp: OTEL_EXPORTER_OTLP_PROTOCOL={other:?} is not supported \
                 (http/protobuf, http/json); using http/protobuf"
            );
            Protocol::HttpBinary
        }
    }
}

fn install() -> Result<Installed, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("ferromcp-otlp")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the exporter's runtime: {e}"))?;
    let client = HyperClient::new(runtime.handle().clone());
    let protocol = protocol_from_env();
    let resource = match std::env::var("OTEL_SERVICE_NAME") {
        Ok(name) if !name.is_empty() => Resource::builder().build(),
        _ => Resource::builder().with_service_name("ferromcp").build(),
    };

    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(protocol)
        .with_http_client(client.clone())
        .build()
        .map_err(|e| e.to_string())?;
    let tracer = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .with_resource(resource.clone())
        .build();
    let metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_protocol(protocol)
        .with_http_client(client)
        .build()
        .map_err(|e| e.to_string())?;
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics).build())
        .with_resource(resource)
        .build();
    // The server and the client take the global meter provider's meter when they are built.
    opentelemetry::global::set_meter_provider(meter.clone());

    let level = match std::env::var("FERROMCP_LOG").as_deref() {
        Ok("error") => tracing::level_filters::LevelFilter::ERROR,
        Ok("info") => tracing::level_filters::LevelFilter::INFO,
        Ok("debug") => tracing::level_filters::LevelFilter::DEBUG,
        Ok("trace") => tracing::level_filters::LevelFilter::TRACE,
        _ => tracing::level_filters::LevelFilter::WARN,
    };
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(crate::stderr_log::StderrLog)
        .with_ansi(false)
        // As in `main::init_logging`: never blocks (F40); an unwritable stderr drops the line,
        // never panics.
        .log_internal_errors(false)
        .with_filter(level);
    let otel = tracing_opentelemetry::layer().with_tracer(tracer.tracer("ferromcp"));
    let subscriber = tracing_subscriber::registry().with(otel).with(logs);
    let guard = tracing::subscriber::set_default(subscriber);
    Ok(Installed {
        tracer,
        meter,
        _subscriber: guard,
        runtime: Some(runtime),
    })
}

type HyperInner = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    Full<Bytes>,
>;

/// The exporter's HTTP client: hyper + rustls on the exporter's own runtime.
#[derive(Clone)]
struct HyperClient {
    client: HyperInner,
    runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for HyperClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HyperClient").finish_non_exhaustive()
    }
}

impl HyperClient {
    fn new(runtime: tokio::runtime::Handle) -> Self {
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .build();
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build(https);
        Self { client, runtime }
    }

    async fn send(
        client: HyperInner,
        request: Request<Bytes>,
    ) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let request = hyper::Request::from_parts(parts, Full::new(body));
        let response = client.request(request).await?;
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, MAX_RESPONSE_BODY)
            .collect()
            .await
            .map_err(|e| -> HttpError { e })?
            .to_bytes();
        Ok(Response::from_parts(parts, body))
    }
}

impl HttpClient for HyperClient {
    fn send_bytes<'a, 'b>(
        &'a self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        let client = self.client.clone();
        // On the exporter's runtime: the SDK's export threads have none.
        let task = self.runtime.spawn(async move {
            tokio::time::timeout(EXPORT_TIMEOUT, Self::send(client, request)).await
        });
        Box::pin(async move {
            match task.await {
                Ok(Ok(result)) => result,
                Ok(Err(_)) => Err("OTLP export timed out".into()),
                Err(e) => Err(e.into()),
            }
        })
    }
}
