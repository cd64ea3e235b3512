//! The `otel` features with the global meter provider (its own test binary: it installs one
//! process-wide). S105: while no meter provider is installed, the server and the client built
//! then record no metrics and do no work for them; one installed later is used by the server
//! and client built after it, and not by those built before.
//!
//! Run with `cargo test -p ferromcp-client --features otel --test otel_global`.

#![cfg(feature = "otel")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::{base, connect, within};
use ferromcp_client::otel::{OtelOptions, global_meter_provider_is_noop, metric};
use ferromcp_client::{Client, Lifecycle};
use ferromcp_dispatch::HandlerError;
use ferromcp_server::{RequestContext, Server};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use serde_json::{Value, json};

fn server() -> Server {
    base("otel-global")
        .on_request(
            "tools/call",
            |_ctx: RequestContext, _params: Value| async move {
                Ok::<_, HandlerError>(json!({"content": []}))
            },
        )
        .build()
        .unwrap()
}

async fn client() -> Client {
    let builder = Client::builder()
        .lifecycle(Lifecycle::Handshake)
        .otel(OtelOptions::new());
    connect(builder, server()).await
}

/// How many measurements histogram `name` has taken so far (the sum of its data points'
/// cumulative counts in the latest export).
fn measured(provider: &SdkMeterProvider, exporter: &InMemoryMetricExporter, name: &str) -> u64 {
    provider.force_flush().unwrap();
    let mut count = 0;
    if let Some(rm) = exporter.get_finished_metrics().unwrap().last() {
        for sm in rm.scope_metrics() {
            for m in sm.metrics().filter(|m| m.name() == name) {
                if let AggregatedMetrics::F64(MetricData::Histogram(h)) = m.data() {
                    count += h.data_points().map(|dp| dp.count()).sum::<u64>();
                }
            }
        }
    }
    count
}

/// S105: with no meter provider installed there is nothing to record with, and
/// `OtelOptions::recorded_metrics` says so (the server and the client ask it once, when built,
/// and then neither time calls nor build metric attributes); a provider installed afterwards
/// records the calls of a server and client built after it, not of those built before.
#[tokio::test]
async fn s105_metrics_are_recorded_only_with_a_meter_provider_installed_first() {
    within(async {
        assert!(global_meter_provider_is_noop());
        assert!(OtelOptions::new().recorded_metrics().is_none());
        let early = client().await;

        let exporter = InMemoryMetricExporter::default();
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter.clone()).build())
            .build();
        opentelemetry::global::set_meter_provider(provider.clone());
        assert!(!global_meter_provider_is_noop());
        assert!(OtelOptions::new().recorded_metrics().is_some());

        early.call_tool("t", json!({})).await.unwrap();
        assert_eq!(
            measured(&provider, &exporter, metric::SERVER_OPERATION_DURATION),
            0
        );
        assert_eq!(
            measured(&provider, &exporter, metric::CLIENT_OPERATION_DURATION),
            0
        );

        let late = client().await;
        late.call_tool("t", json!({})).await.unwrap();
        // At least `initialize` and `tools/call` on each side.
        assert!(measured(&provider, &exporter, metric::SERVER_OPERATION_DURATION) >= 2);
        assert!(measured(&provider, &exporter, metric::CLIENT_OPERATION_DURATION) >= 2);
    })
    .await;
}
