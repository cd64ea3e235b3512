//! `ferromcp inspect TARGET [--json] [--output FORMAT]`: what a server is and what it offers.
//!
//! The default output is text for people (stdout): server, protocol version and era,
//! capabilities, instructions, then every tool, resource, resource template and prompt (all
//! pages), one per line. `--json` (`--output json`) prints the same as one JSON object for
//! scripts, `--output compact` that object on one line. A list the
//! server does not declare is skipped; a list that fails is reported and the exit status is 1.

use std::fmt::Write as _;

use ferromcp_client::{Client, ClientError, SessionInfo};
use ferromcp_types::Era;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::client_cmd::describe;
use crate::output::Output;

/// One list the server may offer: its JSON, or why it is missing.
enum Listed {
    Items(Vec<Value>),
    NotOffered,
    Failed(String),
}

async fn list<T: Serialize>(
    method: &str,
    offered: bool,
    fut: impl Future<Output = Result<Vec<T>, ClientError>>,
) -> Listed {
    if !offered {
        return Listed::NotOffered;
    }
    match fut.await {
        Ok(items) => Listed::Items(
            items
                .iter()
                .map(|i| serde_json::to_value(i).unwrap_or(Value::Null))
                .collect(),
        ),
        Err(e) => Listed::Failed(describe(method, &e)),
    }
}

/// Runs `inspect` on a connected client.
pub(crate) async fn run(client: &Client, output: Output) -> Result<std::process::ExitCode, String> {
    let session = client.session();
    let caps = serde_json::to_value(&session.capabilities).unwrap_or(Value::Null);
    let has = |k: &str| caps.get(k).is_some_and(|v| !v.is_null());
    let tools = list("tools/list", has("tools"), client.list_all_tools()).await;
    let resources = list(
        "resources/list",
        has("resources"),
        client.list_all_resources(),
    )
    .await;
    let templates = list(
        "resources/templates/list",
        has("resources"),
        client.list_all_resource_templates(),
    )
    .await;
    let prompts = list("prompts/list", has("prompts"), client.list_all_prompts()).await;
    let sections = [
        ("tools", "Tools", &tools),
        ("resources", "Resources", &resources),
        ("resourceTemplates", "Resource templates", &templates),
        ("prompts", "Prompts", &prompts),
    ];
    let text = if !output.is_text() {
        let mut out = Map::new();
        out.insert("serverInfo".into(), json!(session.server_info));
        out.insert(
            "protocolVersion".into(),
            json!(session.protocol_version.as_str()),
        );
        out.insert("era".into(), json!(era_name(session.era)));
        out.insert(
            "supportedVersions".into(),
            json!(session.supported_versions),
        );
        out.insert("capabilities".into(), caps.clone());
        out.insert("instructions".into(), json!(session.instructions));
        for (key, _, listed) in &sections {
            let value = match listed {
                Listed::Items(items) => Value::Array(items.clone()),
                Listed::NotOffered => Value::Null,
                Listed::Failed(e) => json!({ "error": e }),
            };
            out.insert((*key).into(), value);
        }
        crate::output::render(&Value::Object(out), output)?
    } else {
        human(session, &caps, &sections)
    };
    crate::print_out(&text);
    let failures: Vec<&str> = sections
        .iter()
        .filter_map(|(_, _, l)| match l {
            Listed::Failed(e) => Some(e.as_str()),
            _ => None,
        })
        .collect();
    if failures.is_empty() {
        Ok(std::process::ExitCode::SUCCESS)
    } else {
        Err(failures.join("; "))
    }
}

fn era_name(era: Era) -> &'static str {
    match era {
        Era::Modern => "modern",
        _ => "handshake",
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The first line of a description, cut to a readable length.
fn short(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    if line.chars().count() > 100 {
        let mut s: String = line.chars().take(99).collect();
        s.push('…');
        s
    } else {
        line.to_owned()
    }
}

/// `tools (listChanged)`, `logging`, `experimental (a, b)`…
fn capability_summary(caps: &Value) -> String {
    let Some(map) = caps.as_object() else {
        return "(none)".to_owned();
    };
    let parts: Vec<String> = map
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let flags: Vec<&str> = match v.as_object() {
                Some(inner) => inner
                    .iter()
                    .filter(|(_, val)| {
                        matches!(k.as_str(), "experimental" | "extensions")
                            || val.as_bool() == Some(true)
                            || val.is_object()
                    })
                    .map(|(key, _)| key.as_str())
                    .collect(),
                None => Vec::new(),
            };
            if flags.is_empty() {
                k.clone()
            } else {
                format!("{k} ({})", flags.join(", "))
            }
        })
        .collect();
    if parts.is_empty() {
        "(none)".to_owned()
    } else {
        parts.join(", ")
    }
}

/// One line per item: the identifying column padded, then details.
fn item_line(kind: &str, item: &Value) -> (String, String) {
    let name = str_of(item, "name").unwrap_or("?");
    let description = str_of(item, "description").map(short).unwrap_or_default();
    let title = str_of(item, "title");
    let mut details = Vec::new();
    let head = match kind {
        "resources" => {
            details.push(name.to_owned());
            str_of(item, "uri").unwrap_or("?").to_owned()
        }
        "resourceTemplates" => {
            details.push(name.to_owned());
            str_of(item, "uriTemplate").unwrap_or("?").to_owned()
        }
        "prompts" => {
            let args: Vec<String> = item
                .get("arguments")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|arg| {
                            let n = str_of(arg, "name").unwrap_or("?");
                            if arg.get("required").and_then(Value::as_bool) == Some(true) {
                                n.to_owned()
                            } else {
                                format!("{n}?")
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            format!("{name}({})", args.join(", "))
        }
        _ => name.to_owned(),
    };
    if let Some(mime) = str_of(item, "mimeType") {
        details.push(format!("[{mime}]"));
    }
    if let Some(t) = title {
        details.push(format!("\"{t}\""));
    }
    if !description.is_empty() {
        details.push(format!("— {description}"));
    }
    (head, details.join(" "))
}

fn human(session: &SessionInfo, caps: &Value, sections: &[(&str, &str, &Listed)]) -> String {
    let mut s = String::new();
    let server = match &session.server_info {
        Some(i) => {
            let mut t = format!("{} {}", i.name, i.version);
            if let Some(title) = &i.title {
                let _ = write!(t, " ({title})");
            }
            t
        }
        None => "(the server did not say)".to_owned(),
    };
    let _ = writeln!(s, "Server:        {server}");
    let how = match session.era {
        Era::Modern => "modern era, server/discover",
        _ => "handshake era, initialize",
    };
    let _ = writeln!(s, "Protocol:      {} ({how})", session.protocol_version);
    if !session.supported_versions.is_empty() {
        let _ = writeln!(
            s,
            "Supported:     {}",
            session.supported_versions.join(", ")
        );
    }
    let _ = writeln!(s, "Capabilities:  {}", capability_summary(caps));
    match session.instructions.as_deref().map(str::trim) {
        Some(text) if !text.is_empty() => {
            let _ = writeln!(s, "Instructions:");
            for line in text.lines() {
                let _ = writeln!(s, "    {line}");
            }
        }
        _ => {}
    }
    for (key, title, listed) in sections {
        let _ = writeln!(s);
        match listed {
            Listed::NotOffered => {
                let _ = writeln!(s, "{title}: (not offered)");
            }
            Listed::Failed(e) => {
                let _ = writeln!(s, "{title}: (failed: {e})");
            }
            Listed::Items(items) if items.is_empty() => {
                let _ = writeln!(s, "{title}: (none)");
            }
            Listed::Items(items) => {
                let _ = writeln!(s, "{title} ({}):", items.len());
                let lines: Vec<(String, String)> =
                    items.iter().map(|i| item_line(key, i)).collect();
                let width = lines
                    .iter()
                    .map(|(h, _)| h.chars().count())
                    .max()
                    .unwrap_or(0)
                    .min(40);
                for (head, details) in lines {
                    let line = format!("    {head:<width$}  {details}");
                    let _ = writeln!(s, "{}", line.trim_end());
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::{capability_summary, item_line};
    use serde_json::json;

    #[test]
    fn summaries() {
        let caps = json!({
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": false},
            "logging": {},
            "experimental": {"x": {}},
        });
        assert_eq!(
            capability_summary(&caps),
            "experimental (x), logging, resources (subscribe), tools (listChanged)"
        );
        assert_eq!(capability_summary(&json!({})), "(none)");
        let (h, d) = item_line(
            "prompts",
            &json!({"name": "greet", "description": "Says hi.\nMore.",
                    "arguments": [{"name": "name", "required": true}, {"name": "tone"}]}),
        );
        assert_eq!(
            (h.as_str(), d.as_str()),
            ("greet(name, tone?)", "— Says hi.")
        );
        let (h, d) = item_line(
            "resources",
            &json!({"uri": "demo://readme", "name": "readme", "mimeType": "text/plain"}),
        );
        assert_eq!(
            (h.as_str(), d.as_str()),
            ("demo://readme", "readme [text/plain]")
        );
    }
}
