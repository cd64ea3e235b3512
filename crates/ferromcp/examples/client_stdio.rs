//! A client that starts a server as a child process and talks to it over stdio: it lists the
//! tools, calls one, and answers what the server asks back — sampling, elicitation and roots.
//!
//! `cargo build -p ferromcp --examples && cargo run -p ferromcp --example client_stdio`
//!
//! With no command it runs this package's `minimal_tools` example (built next to this one) and
//! calls `add`. Name any other stdio server after the options:
//!
//! ```text
//! client_stdio [--era auto|handshake|modern] [--call TOOL ARGS_JSON] [COMMAND [ARG]...]
//! client_stdio --call haiku '{}' target/debug/examples/multi_round
//! client_stdio --call test_sampling '{"prompt": "Hi"}' ferromcp serve
//! ```
//!
//! The handlers answer in both eras: before 2026-07-28 the server's questions arrive as
//! requests (`sampling/createMessage`, `elicitation/create`, `roots/list`); at 2026-07-28 as
//! the `inputRequests` of an `input_required` result, which the client answers and retries by
//! itself. Either way the same closures run. A real host would show the form to the user and
//! ask its model; these answer with canned values and print what they were asked.

// A command-line program: printing is its output.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;

use ferromcp::Client;
use ferromcp::client::{Lifecycle, StdioTransport};
use ferromcp::types::mcp::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, ElicitValue, ListRootsResult, Role, Root, SamplingContent, StopReason,
};
use serde_json::Value;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse(std::env::args().skip(1).collect())?;
    let mut command = options.command.into_iter();
    let program = command.next().ok_or("no command")?;
    println!("starting {program}");
    let transport = StdioTransport::new(&program).args(command);

    let client = Client::builder()
        .lifecycle(options.era)
        // `sampling/createMessage`: the server asks the host's model for a completion.
        .on_sampling(|params: CreateMessageRequestParams| async move {
            let asked = params.messages.iter().flat_map(|m| m.content.blocks());
            for block in asked {
                if let SamplingContent::Text(t) = block {
                    println!("[sampling] {}", t.text);
                }
            }
            let reply = "Old pond, a frog jumps: the sound of water.";
            Ok(CreateMessageResult::new(
                Role::Assistant,
                SamplingContent::text(reply),
                "example-model",
            )
            .with_stop_reason(StopReason::EndTurn))
        })
        // `elicitation/create`: the server asks the user to fill in a form (or open a URL).
        .on_elicitation(|params: ElicitRequestParams| async move {
            match params {
                ElicitRequestParams::Form(form) => {
                    println!("[elicitation] {}", form.message);
                    Ok(ElicitResult::accept(fill_in(&form.requested_schema)))
                }
                // A URL-mode elicitation: a real host would ask before opening the browser.
                _ => {
                    println!("[elicitation] declining a URL-mode request");
                    Ok(ElicitResult::new(ElicitAction::Decline))
                }
            }
        })
        // `roots/list`: the directories the host lets the server see.
        .on_roots(|| async {
            println!("[roots] asked");
            let cwd = std::env::current_dir().unwrap_or_default();
            let root = Root::new(format!("file://{}", cwd.display()));
            Ok(ListRootsResult::new(vec![root]))
        })
        // The server's log messages.
        .on_logging(|log| async move { eprintln!("[log {:?}] {}", log.level, log.data) })
        .connect(transport)
        .await?;

    let session = client.session();
    let name = session
        .server_info
        .as_ref()
        .map_or("?", |i| i.name.as_str());
    println!(
        "connected to {name} (protocol {}, {:?} era)",
        session.protocol_version, session.era
    );

    let tools = client.list_tools(None).await?;
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    println!("tools: {}", names.join(", "));

    let outcome = call(&client, &options.call).await;
    // Ends the child: closes its stdin, waits, then SIGTERM, then SIGKILL.
    client.shutdown().await;
    outcome
}

/// Calls the tool and prints its text content.
async fn call(
    client: &Client,
    (tool, args): &(String, Value),
) -> Result<(), Box<dyn std::error::Error>> {
    // A protocol error (unknown tool, bad arguments) is an `Err`; a tool that ran and failed
    // is an `Ok` result with `isError: true`.
    let result = client.call_tool(tool, args.clone()).await?;
    let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
    let failed = if result.is_error == Some(true) {
        " (tool error)"
    } else {
        ""
    };
    println!("{tool} -> {}{failed}", text.join("\n"));
    Ok(())
}

/// Canned answers for a form: a string, number or boolean per field, by its type.
fn fill_in(schema: &ferromcp::types::mcp::ElicitationSchema) -> BTreeMap<String, ElicitValue> {
    schema
        .properties
        .iter()
        .map(|(name, def)| {
            let kind = serde_json::to_value(def).unwrap_or_default()["type"].clone();
            let value = match kind.as_str() {
                Some("boolean") => ElicitValue::Boolean(true),
                Some("number" | "integer") => ElicitValue::Number(1.0),
                _ => ElicitValue::String("autumn".to_string()),
            };
            (name.clone(), value)
        })
        .collect()
}

/// The command line.
struct Options {
    era: Lifecycle,
    call: (String, Value),
    command: Vec<String>,
}

impl Options {
    fn parse(mut args: Vec<String>) -> Result<Self, Box<dyn std::error::Error>> {
        let mut era = Lifecycle::Auto;
        let mut call = ("add".to_string(), serde_json::json!({"a": 2, "b": 3}));
        loop {
            match args.first().map(String::as_str) {
                Some("--era") if args.len() > 1 => {
                    era = match args[1].as_str() {
                        "handshake" => Lifecycle::Handshake,
                        "modern" => Lifecycle::Modern,
                        "auto" => Lifecycle::Auto,
                        other => return Err(format!("unknown era {other}").into()),
                    };
                    args.drain(..2);
                }
                Some("--call") if args.len() > 2 => {
                    call = (args[1].clone(), serde_json::from_str(&args[2])?);
                    args.drain(..3);
                }
                _ => break,
            }
        }
        let command = if args.is_empty() {
            // This package's `minimal_tools` example, next to this binary.
            let me = std::env::current_exe()?;
            let sibling =
                me.with_file_name(format!("minimal_tools{}", std::env::consts::EXE_SUFFIX));
            if !sibling.exists() {
                return Err(format!(
                    "{} is not built: `cargo build -p ferromcp --examples` first, or name a \
                     server command",
                    sibling.display()
                )
                .into());
            }
            vec![sibling.to_string_lossy().into_owned()]
        } else {
            args
        };
        Ok(Self { era, call, command })
    }
}
